#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The shell scripts' pipefail lint: no reader that leaves early behind a writer that may not
be done.

  pipefail-lint.py [--allow FILE] SCRIPT...

Under `set -o pipefail` a pipeline's status is its last failing member's. A reader that stops
before the end of its input (`head`, `grep -q`/`-m`/`-l`, `sed ...q`, an awk program that
exits outside END) closes the pipe while the writer may still have output to write: once more
than a pipe's buffer (64 KiB on Linux) is left, the writer dies of SIGPIPE, the pipeline's
status is 141, `set -e` ends the script without a word, and in an `if`/`&&`/`||` the condition
is false: the wrong branch, silently. The output was small on the machine the script was
written on and larger on the next one (ldconfig -p, a module tree's find, vmlinux's symbols):
the fresh CI machine's silent hook oracle (3c9a2ae).

Each such pipeline in a script that sets pipefail, or in a file such a script sources (by
a name among the SCRIPTs), is printed as "PATH:LINE: WRITER | READER"
and the exit status is 1, unless the writer just before the reader is bounded by itself (the
BOUNDED patterns below: a head/tail/sed of a fixed number of lines, a --version) or an
allow-list line names it: "PATH<TAB>REGEX<TAB>WHY", REGEX searched in the pipeline's text, for
writers the script itself keeps small (a test's own few files), with the reason why.

This is a reader of shell text, not a shell: it follows quotes, $( ), ( ), here-documents,
comments and line continuations, which is what the project's scripts use; a pipeline it cannot
split is one it does not judge, never a false alarm.
"""

import re
import sys

# writers whose output is bounded whatever the machine: a fixed count of lines or bytes, one
# line by number, a version banner
BOUNDED = [
    re.compile(r'^(head|tail) +(-n *[0-9]+|-[0-9]+|-c *[0-9]+)( |$)'),
    re.compile(r"^sed +-n +'?[0-9]+p'?( |$)"),
    re.compile(r'(^| )--version( |$)'),
]

KEYWORDS = {'if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', '{', 'time'}


def skip_dq(text, i):
    """The index after the double-quoted string opening at text[i]."""
    i += 1
    while i < len(text):
        c = text[i]
        if c == '\\':
            i += 2
        elif c == '"':
            return i + 1
        elif text.startswith('$(', i):
            i = skip_paren(text, i + 1)
        elif c == '`':
            j = text.find('`', i + 1)
            i = len(text) if j < 0 else j + 1
        else:
            i += 1
    return i


def skip_paren(text, i):
    """The index after the ')' that closes the '(' at text[i], shell quoting followed."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '\\':
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = len(text) if j < 0 else j + 1
            continue
        if c == '"':
            i = skip_dq(text, i)
            continue
        if c == '#' and (i == 0 or text[i - 1] in ' \t\n;'):
            j = text.find('\n', i)
            i = len(text) if j < 0 else j
            continue
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def dq_substs(text, i, j, line):
    """('sub', inner text, line) for each $( ) of the double-quoted string text[i:j]."""
    k = i + 1
    while k < j:
        if text[k] == '\\':
            k += 2
        elif text.startswith('$(', k) and not text.startswith('$((', k):
            e = skip_paren(text, k + 1)
            yield ('sub', text[k + 2:e - 1], line + text.count('\n', i, k + 2))
            k = e
        else:
            k += 1


def tokens(text):
    """(kind, value, line): kind 'w' a word (its raw text), 'op' an operator, 'sub' the text of
    a $( ), ( ) or <( ) (judged on its own), ')' a ')' no '(' opened (a case pattern's end)."""
    i, line, n = 0, 1, len(text)
    heredocs = []  # delimiters whose bodies start at the next newline
    word, wline = [], 1

    def flush():
        nonlocal word
        if word:
            w = ''.join(word)
            word = []
            return [('w', w, wline)]
        return []

    def add(s):
        nonlocal wline
        if not word:
            wline = line
        word.append(s)

    while i < n:
        c = text[i]
        if c == '\\' and i + 1 < n:
            if text[i + 1] == '\n':  # a continuation
                i += 2
                line += 1
                continue
            add(text[i:i + 2])
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            j = n - 1 if j < 0 else j
            add(text[i:j + 1])
            line += text.count('\n', i, j + 1)
            i = j + 1
            continue
        if c == '"':
            j = skip_dq(text, i)
            yield from dq_substs(text, i, j, line)
            add(text[i:j])
            line += text.count('\n', i, j)
            i = j
            continue
        if c == '#' and not word:
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        if text.startswith('$((', i) or (text.startswith('((', i) and not word):
            j = skip_paren(text, i + 1 if c == '$' else i)
            add('$((…))')
            line += text.count('\n', i, j)
            i = j
            continue
        if text.startswith('$(', i) or (c == '(' and not word) or text.startswith('<(', i) \
                or text.startswith('>(', i):
            o = i + 1 if c != '(' else i
            j = skip_paren(text, o)
            yield ('sub', text[o + 1:j - 1], line)
            add(text[i:o + 1] + '…)')
            line += text.count('\n', i, j)
            i = j
            continue
        if c == ')':
            yield from flush()
            yield (')', ')', line)
            i += 1
            continue
        if text.startswith('<<<', i):
            yield from flush()
            yield ('w', '<<<', line)
            i += 3
            continue
        if text.startswith('<<', i):
            m = re.match(r'<<-?\s*(["\']?)([A-Za-z_0-9]+)\1', text[i:])
            if m:
                yield from flush()
                heredocs.append(m.group(2))
                i += m.end()
                continue
        if c == '\n':
            yield from flush()
            yield ('op', '\n', line)
            i += 1
            line += 1
            for d in heredocs:  # skip each body to its delimiter line
                while i < n:
                    j = text.find('\n', i)
                    j = n if j < 0 else j
                    body = text[i:j]
                    i = j + 1
                    line += 1
                    if body.strip() == d:
                        break
            heredocs = []
            continue
        if c in ' \t':
            yield from flush()
            i += 1
            continue
        # redirections: 2>&1, >&2, &>FILE are words, not '&'
        if c == '&' and (text.startswith('&>', i) or (word and word[-1][-1:] in '<>')):
            add(c)
            i += 1
            continue
        for op in ('||', '&&', ';;', '|&', '|', ';', '&'):
            if text.startswith(op, i):
                yield from flush()
                yield ('op', op, line)
                i += len(op)
                break
        else:
            add(c)
            i += 1
    yield from flush()


def early_reader(words):
    """Why the command WORDS may stop reading before its input's end, else None."""
    while words and re.match(r'^[A-Za-z_][A-Za-z_0-9]*=', words[0]):
        words = words[1:]
    if not words:
        return None
    cmd, args = words[0], words[1:]
    if cmd == 'head':
        return 'head'
    if cmd == 'grep':
        for a in args:
            if a == '--':
                break
            if re.match(r'^--(quiet|silent|max-count|files-with(out)?-match)', a) or \
                    re.match(r'^-[A-Za-z]*[qlLm]', a):
                return 'grep ' + a
        return None
    if cmd == 'sed':
        script = ' '.join(a.strip('\'"') for a in args if not a.startswith('-'))
        # s/// and y/// bodies are not commands
        script = re.sub(r'(^|[;{}\s0-9$/])[sy](.)(?:(?!\2).)*\2(?:(?!\2).)*\2[a-zA-Z0-9]*',
                        r'\1', script)
        if re.search(r'(^|[;{}\s0-9$/])[qQ]\s*[0-9]*\s*($|[;}])', script):
            return 'sed ...q'
        return None
    if cmd in ('awk', 'gawk', 'mawk'):
        prog, k = '', 0
        while k < len(args):  # the program: the first operand after -v/-F/-f's values
            if args[k] in ('-v', '-F', '-f'):
                k += 2
            elif args[k].startswith('-'):
                k += 1
            else:
                prog = args[k]
                break
        main = prog.split('END', 1)[0]
        if re.search(r'\bexit\b', main):
            return 'awk ...exit'
    return None


def command_text(words):
    while words and words[0] in KEYWORDS:
        words = words[1:]
    return ' '.join(words)


def scan(text, base=0):
    """Yield (line, pipeline text, writer, reason) for each early reader behind a writer."""
    pipe, cmd, case = [], [], 0

    def end_pipeline():
        nonlocal pipe, cmd
        if cmd:
            pipe.append(cmd)
        done, pipe, cmd = pipe, [], []
        for k in range(1, len(done)):
            why = early_reader([w for _, w in done[k] if w not in KEYWORDS])
            if not why:
                continue
            writer = command_text([w for _, w in done[k - 1]])
            if any(b.search(writer) for b in BOUNDED):
                continue
            text = ' | '.join(command_text([w for _, w in c]) for c in done)
            yield done[k][0][0], text, writer, why

    for kind, val, line in tokens(text):
        line += base
        if kind == 'sub':
            yield from scan(val, line - 1)
        elif kind == 'w':
            if not cmd and val == 'case':
                case += 1
            elif not cmd and val == 'esac' and case:
                case -= 1
            cmd.append((line, val))
        elif kind == ')':  # a case pattern's end: its '|' are alternatives
            pipe, cmd = [], []
        elif val in ('|', '|&'):
            if cmd:
                pipe.append(cmd)
                cmd = []
        elif val == '\n' and not cmd and pipe:
            continue  # a pipeline continued on the next line after its '|'
        else:
            yield from end_pipeline()
    yield from end_pipeline()


def sets_pipefail(text):
    return re.search(r'^\s*set\s+(-[a-zA-Z]*o\s+|-o\s+|-[a-zA-Z]+\s+-o\s+)pipefail\b', text,
                     re.M) is not None


def main(argv):
    allow = []
    if len(argv) > 2 and argv[1] == '--allow':
        with open(argv[2], encoding='utf-8') as f:
            for ln in f:
                ln = ln.rstrip('\n')
                if not ln or ln.startswith('#'):
                    continue
                p, rx, _why = ln.split('\t', 2)
                allow.append((p, re.compile(rx)))
        argv = argv[2:]
    texts = {}
    for path in argv[1:]:
        with open(path, encoding='utf-8', errors='replace') as f:
            texts[path] = f.read()
    # the scripts that set pipefail, and the files they source: those run under it too
    judged = {p for p, t in texts.items() if sets_pipefail(t)}
    sourced = {m.group(1) for p in judged for m in re.finditer(
        r'^\s*(?:\.|source)\s+\S.*/([A-Za-z0-9_.-]+\.sh)"?\s*$', texts[p], re.M)}
    judged |= {p for p in texts if p.rsplit('/', 1)[-1] in sourced}
    found = 0
    for path in argv[1:]:
        if path not in judged:
            continue
        for line, pipe, writer, why in scan(texts[path]):
            if any(path.endswith(p) and rx.search(pipe) for p, rx in allow):
                continue
            print(f'{path}:{line}: {pipe}  [{why} behind: {writer}]')
            found += 1
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
