"""Comments outside strings in streamed JSON (``stream_json``): ``//`` to the line's end and ``/* */``, skipped
and kept as written in ``removed``, whatever the chunking.

Invariant: a "/" is decided only once the character after it is known (a comment's start, or part of a word);
a comment cut by the chunk's end goes on in the next chunk, and one still open at the end is ended there. A comment
ends a value of bare words (``New // c`` then ``York``): what follows it never joins that value, so a comment left
out never makes one string of text the model wrote apart.
"""

from __future__ import annotations

from .json_lexis import comment_end

__all__ = ["CommentEcho"]


class CommentEcho:
    """The comment part of ``JsonEcho`` (the echo reads words and calls ``_skip_comment`` while ``_comment``)."""

    _comment: str  # outside strings: "/" (a slash, maybe a comment's start), "//", "/*", "/**" (a "*" read)
    _comment_text: list[str]  # the comment being skipped, as written
    _word: str  # a bare word, maybe cut by the chunk's end
    _bare: list[str] | None  # a held value of bare words that later words may still join
    removed: list[str]  # the comments left out, as written

    def _end_word(self) -> None:
        raise NotImplementedError

    def _skip_comment(self, text: str, i: int, n: int) -> int:
        """Outside strings, from a "/": a comment is skipped (to its line's end, or past its ``*/``); a "/"
        that starts none belongs to the word it stands in, or starts one."""
        c = self._comment
        if c == "/":
            if text[i] not in "/*":
                self._comment = ""
                self._word += "/"
                return i
            self._comment, self._comment_text = "/" + text[i], ["/" + text[i]]
            if self._word:
                self._end_word()
            self._bare = None  # no later word joins the words before the comment (held still: an operator may follow)
            return i + 1
        self._comment, end = comment_end(c, text, i, n)
        self._comment_text.append(text[i:end])
        if not self._comment:
            self.removed.append("".join(self._comment_text).rstrip())
            self._comment_text = []
        return end

    def _end_comment(self) -> None:
        """The input ended: a lone "/" belongs to its word; an open comment ends here."""
        if self._comment == "/":
            self._comment, self._word = "", self._word + "/"
        elif self._comment:
            self._comment = ""
            self.removed.append("".join(self._comment_text).rstrip())
