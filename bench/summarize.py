#!/usr/bin/env python3
"""Turns the text output of `coalesce bench spmv` into Markdown tables for bench/RESULTS.md.

usage: bench/summarize.py bench_spmv.txt > table.md
One row per matrix: best cuSPARSE time, then each kernel's ratio to it (higher is better),
and the share of the copy bandwidth reached by the fastest of our kernels.
"""
import re
import sys

ROW = re.compile(r"\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+)x\s+(ok|FAIL)")


def parse(text):
    for block in text.split("\n== ")[1:]:
        head = block.split("\n", 1)[0]
        name = head.split(": ", 1)[0]
        nnz = re.search(r"(\d+) nonzeros", head)
        rows = {}
        for line in block.split("\n"):
            m = ROW.match(line)
            if m:
                rows[m.group(1)] = dict(us=float(m.group(2)), gbps=float(m.group(3)),
                                        pct=float(m.group(4)), ratio=float(m.group(5)),
                                        ok=m.group(6) == "ok")
        if "cusparse-alg1" in rows:
            yield name, int(nnz.group(1)) if nnz else 0, rows


def main():
    text = open(sys.argv[1]).read()
    cols = ["csr-vector", "csr-merge", "fastload", "fastload-t", "fastload-t(sorted)"]
    print("| matrix | nnz | cuSPARSE best (us) | auto picks | auto | " + " | ".join(cols) +
          " | best % copy |")
    print("|---|---:|---:|---|---:|" + "---:|" * len(cols) + "---:|")
    for name, nnz, r in parse(text):
        best_cs = min(r["cusparse-alg1"]["us"], r["cusparse-alg2"]["us"])
        auto = [k for k in r if k.startswith("auto=")]
        auto_k = auto[0].split("=", 1)[1] if auto else "-"
        auto_r = f"{r[auto[0]]['ratio']:.2f}x" if auto else "-"
        ours = [r[c] for c in cols[:4] if c in r and r[c]["ok"]]
        best_pct = max(o["pct"] for o in ours) if ours else float("nan")
        cells = [f"{r[c]['ratio']:.2f}x" if c in r else "-" for c in cols]
        fails = [k for k, v in r.items() if not v["ok"]]
        note = " FAIL: " + ",".join(fails) if fails else ""
        print(f"| {name}{note} | {nnz} | {best_cs:.2f} | {auto_k} | {auto_r} | " +
              " | ".join(cells) + f" | {best_pct:.1f}% |")


if __name__ == "__main__":
    main()
