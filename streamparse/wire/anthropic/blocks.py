"""Anthropic content blocks as OpenAI message content.

Invariant: every block of the Messages API's content unions (user, assistant and ``system`` messages, and a
``tool_result``'s content) is either translated into what an OpenAI-compatible backend reads (text, ``image_url``
and ``file`` parts, ``tool_calls``, ``tool`` messages), or dropped because only Anthropic's own servers act on it
(``DROPPED``), or refused with ``BadRequest`` naming the block where dropping it would change what the answer
means. A block type this module does not know is refused. Pure; the input is never modified.

The decisions, block by block (``request.py``'s docstring has the request-level ones):

- ``text`` -> text (``citations`` and ``cache_control`` are Anthropic's and ignored);
- ``image`` (base64 or url source) -> an ``image_url`` part; a ``file`` source (an id in Anthropic's Files API,
  which no backend here can fetch) is refused;
- ``document``: a ``text`` source -> text, a ``content`` source -> its text and image blocks, a base64 PDF -> an
  OpenAI ``file`` part (``file_data`` as a data URL; the backend reads it or says it cannot), each after its
  ``title`` and ``context``; a PDF by ``url`` or by ``file`` id is refused (the model would not see it);
- ``search_result`` -> text: its title, its source, then its text blocks;
- ``compaction`` (beta) -> its summary as text (a failed one, ``content: null``, is dropped as Anthropic does);
- results of Anthropic's server tools in the history -> what the model read, as text: web search (titles and
  URLs; the encrypted page texts cannot be read), web fetch (URL and text), code execution (stdout, stderr),
  MCP tool results (their text); the rest of ``DROPPED`` leaves nothing the model read;
- ``tool_use`` (assistant) -> ``tool_calls``; ``tool_result`` (user) -> a ``tool`` message (``is_error`` ->
  ``Error: …``), its content as text: images and non-text documents become ``[image omitted]`` /
  ``[document omitted]`` (tool messages carry text only), a ``tool_reference`` (what tool search returns) names
  the tool, and loads it (a ``defer_loading`` tool is offered from then on: a change in ``changes``);
- ``tool_addition`` / ``tool_removal`` (beta: in any message, and in a ``compaction``'s ``tool_changes``) ->
  changes to the tools offered, collected in order in ``changes`` and applied by ``tools.offered_tools``; so are
  the ``tool_reference`` blocks of a ``tool_result`` and of a server ``tool_search_tool_result`` (whose block is
  otherwise dropped).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..validation import BadRequest

__all__ = ["DROPPED", "Changes", "kind_of", "texts", "system_text", "user_messages", "assistant_message",
           "tool_result_text"]

# Blocks that only mean something to Anthropic's servers: the model's earlier reasoning (not sent back to an
# OpenAI-style backend), server tool calls (their results carry what the model read), files for Anthropic's code
# execution container (no container here), and beta bookkeeping.
DROPPED = frozenset({"thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", "container_upload",
                     "tool_search_tool_result", "text_editor_code_execution_tool_result", "advisor_tool_result",
                     "fallback", "mcp_tool_listing"})
_SERVER_RESULTS = frozenset({"web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                             "bash_code_execution_tool_result", "mcp_tool_result"})
Changes = list[tuple[str, Any, str]]  # ("tool_addition" | "tool_removal" | "tool_reference", the block's
#                                        ``tool`` (or the tool_reference block itself), where)


def kind_of(block: Any) -> str | None:
    """A block's ``type`` (None: not a block)."""
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) else None


def texts(content: Any, where: str) -> list[str]:
    """A string, or a list of text blocks, as its texts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of text blocks", param=where)
    out = []
    for i, block in enumerate(content):
        if kind_of(block) != "text" or not isinstance(block.get("text"), str):
            raise BadRequest(f"{where}[{i}] must be a text block", param=f"{where}[{i}]")
        out.append(block["text"])
    return out


def _tool_change(block: Mapping[str, Any], kind: str, at: str, changes: Changes) -> None:
    if not isinstance(block.get("tool"), dict):
        raise BadRequest(f"{at}.tool must be an object", param=f"{at}.tool")
    changes.append((kind, block["tool"], at))


def _references(block: Mapping[str, Any], at: str, changes: Changes) -> None:
    """The tools a server tool search's result loaded (``tool_reference`` blocks), as changes."""
    content = block.get("content")
    found = content.get("tool_references") if isinstance(content, dict) else None
    for i, ref in enumerate(found if isinstance(found, list) else ()):
        if kind_of(ref) == "tool_reference" and isinstance(ref.get("tool_name"), str):
            changes.append(("tool_reference", ref, f"{at}.content.tool_references[{i}]"))


def system_text(content: Any, where: str, changes: Changes) -> str:
    """A ``system`` message's content (a string, or text blocks and beta tool changes) as one string."""
    if not isinstance(content, list):
        return "\n".join(texts(content, where))
    lines = []
    for i, block in enumerate(content):
        at, kind = f"{where}[{i}]", kind_of(block)
        if kind in ("tool_addition", "tool_removal"):
            _tool_change(block, kind, at, changes)
        elif kind == "text" and isinstance(block.get("text"), str):
            lines.append(block["text"])
        else:
            raise BadRequest(f"{at} must be a text block (or a tool_addition / tool_removal)", param=at)
    return "\n".join(lines)


def _image_url(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type") or "image/png"
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{source['data']}"}}
    if isinstance(source, dict) and source.get("type") == "url" and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    raise BadRequest(f"{where}.source must be a base64 or url image source (an Anthropic file id cannot be "
                     "fetched here)", param=f"{where}.source")


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _document(block: Mapping[str, Any], at: str) -> list[dict[str, Any]]:
    """A ``document`` block as parts: its title and context, then its text, blocks or PDF."""
    source = block.get("source")
    if not isinstance(source, dict):
        raise BadRequest(f"{at}.source must be a document source", param=f"{at}.source")
    kind = source.get("type")
    head = "\n".join(v for v in (block.get("title"), block.get("context")) if isinstance(v, str) and v)
    if kind == "text":
        return [_text_part("\n".join(filter(None, [head, str(source.get("data", ""))])))]
    parts = [_text_part(head)] if head else []
    if kind == "content":
        inner = source.get("content")
        if isinstance(inner, str):
            return [_text_part("\n".join(filter(None, [head, inner])))]
        if isinstance(inner, list):
            for i, item in enumerate(inner):
                where = f"{at}.source.content[{i}]"
                if kind_of(item) == "text" and isinstance(item.get("text"), str):
                    parts.append(_text_part(item["text"]))
                elif kind_of(item) == "image":
                    parts.append(_image_url(item, where))
                else:
                    raise BadRequest(f"{where} must be a text or image block", param=where)
            return parts
    if kind == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type") or "application/pdf"
        name = block.get("title") if isinstance(block.get("title"), str) and block.get("title") else "document.pdf"
        data = f"data:{media};base64,{source['data']}"
        return parts + [{"type": "file", "file": {"filename": name, "file_data": data}}]
    raise BadRequest(f"{at}.source must be a text, content or base64 document source (a document by url or by "
                     "Anthropic file id cannot be passed to an OpenAI-compatible backend)", param=f"{at}.source")


def _search_result(block: Mapping[str, Any], at: str) -> str:
    """A ``search_result`` as text: ``title (source)``, then its text blocks."""
    title, source = block.get("title"), block.get("source")
    head = " ".join(filter(None, [title if isinstance(title, str) else None,
                                  f"({source})" if isinstance(source, str) and source else None]))
    return "\n".join(filter(None, [head, *texts(block.get("content"), f"{at}.content")]))


def _server_result(block: Mapping[str, Any]) -> str | None:
    """What the model read in an Anthropic server tool's result, as text (None: nothing readable)."""
    kind, content = block.get("type"), block.get("content")
    if kind == "web_search_tool_result" and isinstance(content, list):
        found = [f"- {r.get('title', '')} <{r.get('url', '')}>" for r in content
                 if kind_of(r) == "web_search_result"]
        return "Web search results:\n" + "\n".join(found) if found else None
    if kind == "web_fetch_tool_result" and isinstance(content, dict) and content.get("type") == "web_fetch_result":
        doc = content.get("content")
        source = doc.get("source") if isinstance(doc, dict) else None
        text = source.get("data") if isinstance(source, dict) and source.get("type") == "text" else None
        return "\n".join(filter(None, [f"Fetched {content.get('url', '')}", text if isinstance(text, str) else None]))
    if kind in ("code_execution_tool_result", "bash_code_execution_tool_result") and isinstance(content, dict):
        out = [content[k] for k in ("stdout", "stderr") if isinstance(content.get(k), str) and content[k]]
        return "\n".join(out) if out else None
    if kind == "mcp_tool_result" and isinstance(content, (str, list)):
        text = content if isinstance(content, str) else "\n".join(
            b["text"] for b in content if kind_of(b) == "text" and isinstance(b.get("text"), str))
        return (f"Error: {text}" if block.get("is_error") else text) or None
    return None


def _parts(block: Any, at: str, role: str, changes: Changes) -> list[dict[str, Any]]:
    """A block of a user or assistant message as content parts (``[]``: dropped)."""
    kind = kind_of(block)
    if kind == "text" and isinstance(block.get("text"), str):
        return [_text_part(block["text"])]
    if kind == "image":
        return [_image_url(block, at)]
    if kind == "document":
        return _document(block, at)
    if kind == "search_result":
        return [_text_part(_search_result(block, at))]
    if kind == "compaction":
        for i, change in enumerate(block.get("tool_changes") or ()):
            if kind_of(change) in ("tool_addition", "tool_removal"):
                _tool_change(change, str(change["type"]), f"{at}.tool_changes[{i}]", changes)
        return [_text_part(block["content"])] if isinstance(block.get("content"), str) and block["content"] else []
    if kind in ("tool_addition", "tool_removal"):
        _tool_change(block, kind, at, changes)
        return []
    if kind in _SERVER_RESULTS:
        text = _server_result(block)
        return [_text_part(text)] if text else []
    if kind == "tool_search_tool_result":
        _references(block, at, changes)
    if kind in DROPPED:
        return []
    raise BadRequest(f"{at}: a {role} message cannot hold a {kind!r} block here", param=at)


def tool_result_text(block: Mapping[str, Any], where: str, changes: Changes | None = None) -> str:
    """A ``tool_result``'s content as the text of a ``tool`` message; its ``tool_reference`` blocks are added
    to ``changes`` (the tools they load)."""
    content = block.get("content", "")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        pieces = []
        for i, part in enumerate(content):
            at, kind = f"{where}.content[{i}]", kind_of(part)
            if kind == "text" and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif kind == "search_result":
                pieces.append(_search_result(part, at))
            elif kind == "document" and isinstance(part.get("source"), dict) and part["source"].get("type") == "text":
                pieces.append(_document(part, at)[0]["text"])
            elif kind == "tool_reference" and isinstance(part.get("tool_name"), str):
                pieces.append(f"[tool {part['tool_name']} is available]")
                if changes is not None:
                    changes.append(("tool_reference", part, at))
            elif kind in ("image", "document", "browser_state"):
                pieces.append(f"[{kind} omitted]")
            else:
                raise BadRequest(f"{at} must be a text, image, document, search_result or tool_reference block",
                                 param=at)
        text = "\n".join(pieces)
    else:
        raise BadRequest(f"{where}.content must be a string or a list of blocks", param=f"{where}.content")
    return f"Error: {text}" if block.get("is_error") else text


def user_messages(content: Any, where: str, changes: Changes) -> list[dict[str, Any]]:
    """A user message: its ``tool_result`` blocks as ``tool`` messages first (OpenAI wants them right after the
    assistant's calls), then the rest as one user message (a string when all of it is text)."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of blocks", param=where)
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        at = f"{where}[{i}]"
        if kind_of(block) == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                raise BadRequest(f"{at}.tool_use_id must be a string", param=f"{at}.tool_use_id")
            text = tool_result_text(block, at, changes)
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
        else:
            parts.extend(_parts(block, at, "user", changes))
    if not parts:
        return results
    if all(p["type"] == "text" for p in parts):
        return results + [{"role": "user", "content": "\n".join(p["text"] for p in parts)}]
    return results + [{"role": "user", "content": parts}]


def assistant_message(content: Any, where: str, changes: Changes) -> dict[str, Any]:
    """An assistant message: its text as content, its ``tool_use`` blocks as ``tool_calls``."""
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of blocks", param=where)
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        at = f"{where}[{i}]"
        kind = kind_of(block)
        if kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise BadRequest(f"{at} needs a string 'id' and 'name'", param=at)
            arguments = block.get("input", {})
            calls.append({"id": block["id"], "type": "function",
                          "function": {"name": block["name"], "arguments": json.dumps(arguments, ensure_ascii=False)}})
            continue
        for part in _parts(block, at, "assistant", changes):
            if part["type"] != "text":
                raise BadRequest(f"{at}: an assistant message cannot hold a {kind!r} block here", param=at)
            # a text block continues the text; what was read (a server tool's result, a summary) stands apart
            texts.append(part["text"] if kind == "text" else f"\n{part['text']}\n")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message
