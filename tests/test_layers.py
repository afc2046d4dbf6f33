#!/usr/bin/env python3
"""Include direction of the source folders: includes run one way only,
consumers -> solvers -> kernels -> core.

    src/       core (bottom): includes src/ only
    kernels/   includes src/ and kernels/
    solvers/   includes src/, kernels/ and solvers/
    cli/       the `coalesce` command: its own headers and src/coalesce.h
    petsc/     the PETSc plugin: its own headers and the public headers coalesce.h,
               coalesce_petsc.h, coalesce_device.h
    examples/  the public headers only

Every quoted #include of every .c, .h, .cu and .cuh file of these folders is resolved as the
compiler resolves it (the including file's folder first, then the build's include folders src,
kernels, solvers) and checked against its folder's rule; an include that resolves to no file of
the tree fails too. System headers (<...>) are not checked. A violation listed in EXCEPTIONS is
reported but passes; an exception that no longer occurs is reported as stale (remove it).

Usage: test_layers.py SOURCE_ROOT. Exit 0 when every include follows the rules, 1 otherwise.
"""
import os
import re
import sys

INCLUDE_DIRS = ["src", "kernels", "solvers"]  # meson.build: inc, in order
EXTENSIONS = (".c", ".h", ".cu", ".cuh")
PUBLIC = {"src/coalesce.h", "src/coalesce_petsc.h", "src/coalesce_device.h"}

# folder -> (folders it may include from, single files it may include besides)
RULES = {
    "src": ({"src"}, set()),
    "kernels": ({"src", "kernels"}, set()),
    "solvers": ({"src", "kernels", "solvers"}, set()),
    "cli": ({"cli"}, {"src/coalesce.h"}),
    "petsc": ({"petsc"}, PUBLIC),
    "examples": ({"examples"}, PUBLIC),
}

# Known violations, (including file, included file), to be removed by the work named with them.
# Do not add to this list: fix the include instead.
EXCEPTIONS = set()

# Headers meson generates into the build folder (not in the tree): configuration only, allowed
# to every folder.
GENERATED = {"coal_config.h"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def resolve(root, src_rel, name):
    """Path of the included file relative to root, or None."""
    candidates = [os.path.join(os.path.dirname(src_rel), name)]
    candidates += [os.path.join(d, name) for d in INCLUDE_DIRS]
    for c in candidates:
        rel = os.path.normpath(c)
        if not rel.startswith("..") and os.path.isfile(os.path.join(root, rel)):
            return rel.replace(os.sep, "/")
    return None


def allowed(folder, target):
    folders, files = RULES[folder]
    return target.split("/", 1)[0] in folders or target in files


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root = sys.argv[1]
    bad, seen, nfiles, nincludes = [], set(), 0, 0
    for folder in RULES:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for fname in sorted(names):
                if not fname.endswith(EXTENSIONS):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, fname), root).replace(os.sep, "/")
                nfiles += 1
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        nincludes += 1
                        if m.group(1) in GENERATED:
                            continue
                        target = resolve(root, rel, m.group(1))
                        where = "%s:%d: #include \"%s\"" % (rel, lineno, m.group(1))
                        if target is None:
                            bad.append(where + ": resolves to no file of the tree")
                        elif not allowed(folder, target):
                            if (rel, target) in EXCEPTIONS:
                                seen.add((rel, target))
                                print("known exception: %s (%s)" % (where, target))
                            else:
                                bad.append("%s: %s/ may not include %s" % (where, folder, target))
    for rel, target in sorted(EXCEPTIONS - seen):
        print("stale exception (no longer occurs; remove it from EXCEPTIONS): %s -> %s"
              % (rel, target))
    print("%d files, %d quoted includes checked" % (nfiles, nincludes))
    for b in bad:
        print("LAYER VIOLATION: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
