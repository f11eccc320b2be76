"""Swift source as the project's checks read it: `code_only` blanks comments, string literals
(raw, multi-line, with interpolations) and their contents, keeping every newline, so a brace, an
attribute or a type name inside a comment or a string never counts and line numbers still hold.
Shared by scripts/check-tests and scripts/check-folders."""
import re


def code_only(text):
    """The text with comments, string literals and character contents blanked out (newlines
    kept, so line numbers hold): braces and attributes inside them must not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            j = skip_string(text, i)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_string(text, i):
    """The index just past the string literal starting at `i` (raw `#"…"#`, multi-line
    `\"\"\"…\"\"\"`, interpolations `\\(…)` with strings of their own inside)."""
    hashes = 0
    while text[i] == "#":
        hashes, i = hashes + 1, i + 1
    quote = '"""' if text.startswith('"""', i) else '"'
    close = quote + "#" * hashes
    escape = "\\" + "#" * hashes
    j = i + len(quote)
    n = len(text)
    while j < n:
        if text.startswith(escape, j):
            k = j + len(escape)
            if k < n and text[k] == "(":
                depth, k = 1, k + 1
                while k < n and depth:
                    if text[k] == '"' or (text[k] == "#" and re.match(r'#+"', text[k:])):
                        k = skip_string(text, k)
                        continue
                    depth += {"(": 1, ")": -1}.get(text[k], 0)
                    k += 1
                j = k
            else:
                j = k + 1
        elif text.startswith(close, j):
            return j + len(close)
        else:
            j += 1
    return n
