#!/usr/bin/env python3
"""Compiles and runs every C++ block of README.md and docs/*.md (the docs_examples ctest).

A ```cpp block with a `main` is a whole program. Any other block is a fragment: its #include lines
go to the top of a program, the rest into `main` followed by `lf::sync()` (so that what it
recorded is computed). An HTML comment right before the block supplies what the page leaves out:

    <!-- example-setup
    lf::Tensor q = lf::randn({1, 2, 16, 8});
    -->

goes into `main` before the fragment; `example-file-scope` goes before `main` (helper functions).
A block followed by a line "prints" and a plain ``` block must print exactly that. A block fenced
```cpp-fragment is shown only, never compiled (there should be few: each says why nearby).

usage: run_examples.py --cxx CXX --include DIR --lib DIR [--eigen DIR] [--only FILE] ROOT
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r'^```(\S*)\s*$')
COMMENT = re.compile(r'<!--\s*example-(setup|file-scope)\s*\n(.*?)-->\s*$', re.S)


class Example:
    def __init__(self, path, line, code, setup, file_scope, expected):
        self.path, self.line, self.code = path, line, code
        self.setup, self.file_scope, self.expected = setup, file_scope, expected

    @property
    def name(self):
        return f'{self.path}:{self.line}'

    def program(self):
        if re.search(r'\bint\s+main\s*\(', self.code):
            return self.code
        includes = [l for l in self.code.splitlines() if l.startswith('#include')]
        body = [l for l in self.code.splitlines() if not l.startswith('#include')]
        head = ['#include <cmath>', '#include <cstdint>', '#include <iostream>', '#include <map>',
                '#include <string>', '#include <vector>', '#include <lazyfuse/lazyfuse.h>'] + includes
        return '\n'.join(head + ['', self.file_scope, 'int main() {', self.setup, *body, '  lf::sync();',
                                 '  return 0;', '}', ''])


def examples(path, root):
    lines = path.read_text().splitlines()
    rel = str(path.relative_to(root))
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or m.group(1) == '':
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        if lang == 'cpp':
            code = '\n'.join(lines[start + 1:j])
            # Comments right above the fence (blank lines allowed between them).
            setup = file_scope = ''
            k = start - 1
            while k >= 0 and lines[k].strip() == '':
                k -= 1
            while k >= 0 and lines[k].rstrip().endswith('-->'):
                end = k
                while k >= 0 and '<!--' not in lines[k]:
                    k -= 1
                c = COMMENT.match('\n'.join(lines[k:end + 1]).strip())
                if not c:
                    break
                if c.group(1) == 'setup':
                    setup = c.group(2)
                else:
                    file_scope = c.group(2)
                k -= 1
                while k >= 0 and lines[k].strip() == '':
                    k -= 1
            # "prints" and a plain block after it.
            expected = None
            k = j + 1
            while k < len(lines) and lines[k].strip() == '':
                k += 1
            if k < len(lines) and lines[k].strip() == 'prints':
                k += 1
                while k < len(lines) and lines[k].strip() == '':
                    k += 1
                if k < len(lines) and lines[k].strip() == '```':
                    e = k + 1
                    while e < len(lines) and lines[e].strip() != '```':
                        e += 1
                    expected = '\n'.join(lines[k + 1:e])
            found.append(Example(rel, start + 1, code, setup, file_scope, expected))
        i = j + 1
    return found


def run(example, args, workdir):
    stem = re.sub(r'[^A-Za-z0-9]+', '_', example.name)
    src = pathlib.Path(workdir) / f'{stem}.cpp'
    exe = pathlib.Path(workdir) / stem
    src.write_text(example.program())
    cmd = [args.cxx, '-std=c++20', '-O0', '-w', f'-I{args.include}', str(src), '-o', str(exe),
           f'-L{args.lib}', '-llazyfuse', f'-Wl,-rpath,{args.lib}']
    if args.eigen:
        cmd.insert(3, f'-I{args.eigen}')
    c = subprocess.run(cmd, capture_output=True, text=True)
    if c.returncode != 0:
        return False, f'does not compile:\n{c.stderr[-4000:]}\n--- the program ---\n{example.program()}'
    env = dict(os.environ, LAZYFUSE_CACHE_DIR=os.environ.get('LAZYFUSE_CACHE_DIR', 'off'))
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, cwd=workdir, env=env)
    except subprocess.TimeoutExpired:
        return False, 'ran past 300 s'
    if r.returncode != 0:
        return False, f'exit status {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}'
    if example.expected is not None:
        got = '\n'.join(l.rstrip() for l in r.stdout.rstrip('\n').splitlines())
        want = '\n'.join(l.rstrip() for l in example.expected.rstrip('\n').splitlines())
        if got != want:
            return False, f'printed\n{got}\nwhere the page shows\n{want}'
    return True, ''


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--cxx', required=True)
    p.add_argument('--include', required=True)
    p.add_argument('--lib', required=True)
    p.add_argument('--eigen', default='')
    p.add_argument('--only', default='')
    p.add_argument('root')
    args = p.parse_args()
    root = pathlib.Path(args.root).resolve()
    pages = [root / 'README.md'] + sorted((root / 'docs').glob('*.md'))
    todo = [e for page in pages for e in examples(page, root) if not args.only or e.path == args.only]
    if not todo:
        print('docs_examples: no C++ blocks found (a broken extractor?)')
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix='lazyfuse-docs-') as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda e: (e, run(e, args, workdir)), todo))
    for e, (ok, why) in results:
        print(f'[{"ok" if ok else "FAILED"}] {e.name}' + ('' if ok else f': {why}'))
        failed += not ok
    checked = sum(e.expected is not None for e in todo)
    print(f'docs_examples: {len(todo) - failed} of {len(todo)} blocks passed ({checked} with their output checked)')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
