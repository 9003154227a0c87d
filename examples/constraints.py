"""What a grammar-capable backend should enforce while decoding, for the dialect the proxy prompted."""
from streamparse.constraints import build_constraint

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
    "required": ["city"]}}}]

for backend in ("llamacpp", "vllm", "sglang"):
    constraint = build_constraint("hermes", tools, tool_choice="required", parallel_tool_calls=False, backend=backend)
    assert constraint is not None  # None: tool_choice "none", no tools, or a dialect it cannot express
    fields = constraint.request_fields()  # merge these into the upstream request body
    print(backend, sorted(fields))
print(build_constraint("hermes", tools, backend="llamacpp").request_fields()["grammar"].splitlines()[0])
