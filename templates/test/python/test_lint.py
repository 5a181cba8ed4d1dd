"""A small lint of every verbatim Python file the emitters copy (the SDK's
modules and the composite's package): Python 3.9 grammar, no unused imports,
no names used but never defined. Standard library only, like the files."""

import ast
import builtins
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TREES = [
    os.path.join(HERE, "..", "..", "python", "__pkg__"),
    os.path.join(HERE, "..", "..", "compose", "python", "anvil_compose"),
]


def sources():
    for tree in TREES:
        for name in sorted(os.listdir(tree)):
            if name.endswith(".py"):
                yield os.path.join(tree, name)


def _exported(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)}
    return set()


def problems(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path, feature_version=(3, 9))
    lines = text.splitlines()
    imported = {}
    defined = set(dir(builtins)) | {"__file__", "__name__", "__doc__"}
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue  # a compiler directive, not a name
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if "noqa" not in lines[node.lineno - 1]:
                    imported[name] = node.lineno
                defined.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            if not isinstance(node, ast.ClassDef):
                args = node.args
                for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                    if a is not None:
                        defined.add(a.arg)
        elif isinstance(node, ast.Lambda):
            args = node.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    defined.add(a.arg)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                used.add(node.id)
            else:
                defined.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            defined.update(node.names)
    # Type comments (``# type: Dict[str, Any]``) name typing imports: count them as uses.
    for line in lines:
        if "# type:" in line:
            comment = line.split("# type:", 1)[1].strip()
            if not comment.startswith("ignore"):
                used.update(w.strip("[],():") for w in comment.replace("[", " ").replace(",", " ").split())
    out = []
    exported = _exported(tree)
    for name, lineno in sorted(imported.items(), key=lambda kv: kv[1]):
        if name not in used and name not in exported:
            out.append("%s:%d: %s imported but unused" % (os.path.basename(path), lineno, name))
    for name in sorted(used - defined):
        out.append("%s: %s is used but never defined" % (os.path.basename(path), name))
    return out


class LintTest(unittest.TestCase):
    def test_verbatim_python_is_clean(self):
        found = []
        n = 0
        for path in sources():
            n += 1
            found.extend(problems(path))
        self.assertGreater(n, 10)
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
