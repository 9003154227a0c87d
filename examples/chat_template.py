"""Nothing to configure: the model's own chat template says how its answers are written.

Run it with a template file, e.g. Qwen3.5's from llama.cpp's models/templates/ or a model folder:
    python examples/chat_template.py Qwen3.5-4B.jinja
"""
import sys

from streamparse import StreamParser, read_template

template = open(sys.argv[1], encoding="utf-8").read()  # or tokenizer_config.json's, a GGUF's, llama.cpp's /props
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]

# What the template decides, for the kwargs a request passes to it (thinking on: the prompt opens <think>).
setup = read_template(template, kwargs={"enable_thinking": True})
print("format:", setup.format_name)                # the declaration that reads the template's own calls
print("starts in reasoning:", setup.start_in_reasoning)
print("stop tokens:", setup.stop_tokens)
for note in setup.notes:                            # what was found and decided, in words (a proxy logs them once)
    print("note:", note)

# The answer a model behind that prompt writes: its reasoning's closer, never opened in the answer, then a call.
answer = "The user wants the weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n" \
         "</parameter>\n</function>\n</tool_call>"
parser = StreamParser(tools, chat_template=template, chat_template_kwargs={"enable_thinking": True})
events = [event for i in range(0, len(answer), 7) for event in parser.feed(answer[i : i + 7])] + parser.close()
print("reasoning:", repr("".join(e.text for e in events if e.type == "reasoning")))
print("calls:", [(e.name, e.parsed_arguments) for e in events if e.type == "tool_call"])
