#!/usr/bin/env python3
"""Builds the compact trace presets of core/workload (presets.go) from the
published traces: the first WINDOW seconds of Azure's, the whole of
Mooncake's conversation trace (one hour; LoadPreset reads its first WINDOW
seconds, LoadWholeTrace all of it), one request a line.

    python3 build.py /path/to/traces   # the folder with the files below

Inputs (their licences and attribution: README.md beside this script):
  azure-2023-conv.csv, azure-2023-code.csv   Azure/AzurePublicDataset @ b469a11
  mooncake-fast25-conversation.jsonl          kvcache-ai/Mooncake @ 3b5a594
Output lines: arrival in ms from the window's start, prompt tokens, output
tokens, and for Mooncake the prompt's 512-token block hashes as runs
("0-13,2353-2354": ids 0 to 13, then 2353 and 2354).
"""
import datetime
import json
import sys

WINDOW = 300  # seconds from each trace's first request


def azure(path, out, name):
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            ts, p, o = line.strip().split(",")
            t = datetime.datetime.strptime(ts[:26], "%Y-%m-%d %H:%M:%S.%f")
            rows.append((t, int(p), int(o)))
    t0 = rows[0][0]
    with open(out, "w") as w:
        w.write(f"# {name}: the first {WINDOW} s of {path.split('/')[-1]} (CC-BY 4.0, Patel et al., ISCA 2024)\n")
        w.write("# arrival_ms prompt_tokens output_tokens\n")
        for t, p, o in rows:
            ms = (t - t0) / datetime.timedelta(milliseconds=1)
            if ms >= WINDOW * 1000:
                break
            w.write(f"{int(ms)} {p} {o}\n")


def runs(ids):
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def mooncake(path, out):
    with open(out, "w") as w:
        w.write(f"# mooncake-conversation: the whole of conversation_trace.jsonl, one hour (Apache-2.0, Qin et al., FAST 2025); LoadPreset reads its first {WINDOW} s\n")
        w.write("# arrival_ms prompt_tokens output_tokens hash_id_runs (512-token blocks)\n")
        for line in open(path):
            r = json.loads(line)
            w.write(f"{r['timestamp']} {r['input_length']} {r['output_length']} {runs(r['hash_ids'])}\n")


if __name__ == "__main__":
    d = sys.argv[1]
    azure(d + "/azure-2023-conv.csv", "azure-conv.txt", "azure-conv")
    azure(d + "/azure-2023-code.csv", "azure-code.txt", "azure-code")
    mooncake(d + "/mooncake-fast25-conversation.jsonl", "mooncake-conversation.txt")
