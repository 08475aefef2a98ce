#!/usr/bin/env python3
"""What the prom-workload case of scripts/gpu-check measured, from its
directory: the reference workload's median step time plain, under gpuspy,
and under gpuspy with the endpoint scraped every second, each round run
in turn (A B C A B C); the ratios of the scraped runs against the plain
and the gpuspy ones of the same rounds (target <= 1.01 against plain);
and the last scraped gpuspy_tracked_bytes against the exit report's
leaked bytes and the last snapshot's.  Writes summary.json beside.
Usage: prom_check.py DIR ROUNDS"""
import glob, json, os, re, statistics, sys

d, rounds = sys.argv[1], int(sys.argv[2])


def median_ms(name):
    try:
        m = re.search(r"median_ms=([\d.]+)", open(os.path.join(d, name + ".stdout")).read())
    except OSError:
        return None
    return float(m.group(1)) if m else None


res = {"rounds": []}
for r in range(1, rounds + 1):
    row = {c: median_ms(f"{c}-{r}") for c in ("plain", "gpuspy", "prom")}
    scrapes = []
    try:
        scrapes = [json.loads(l) for l in open(os.path.join(d, f"prom-{r}.scrape.jsonl"))]
    except OSError:
        pass
    ok = [s for s in scrapes if s.get("status") == 200]
    row["scrapes"], row["scrapes_ok"] = len(scrapes), len(ok)
    row["scrape_max_s"] = max((s["took"] for s in ok), default=None)
    row["last_tracked"] = ok[-1]["tracked"] if ok else None
    rep = glob.glob(os.path.join(d, f"prom-{r}", "*", "report.json"))
    snap = glob.glob(os.path.join(d, f"prom-{r}", "*", "snapshot.json"))
    row["report_leaked"] = json.load(open(rep[0]))["leaked"]["bytes"] if rep else None
    row["snapshot_leaked"] = json.load(open(snap[0]))["leaked"]["bytes"] if snap else None
    row["report_prometheus"] = json.load(open(rep[0])).get("prometheus") if rep else None
    res["rounds"].append(row)

ratios = [x["prom"] / x["plain"] for x in res["rounds"] if x["prom"] and x["plain"]]
ratios_g = [x["prom"] / x["gpuspy"] for x in res["rounds"] if x["prom"] and x["gpuspy"]]
res["ratio_prom_plain"] = statistics.mean(ratios) if ratios else None
res["ratio_prom_gpuspy"] = statistics.mean(ratios_g) if ratios_g else None
json.dump(res, open(os.path.join(d, "summary.json"), "w"), indent=1)

for i, x in enumerate(res["rounds"], 1):
    print(f"prom-workload round {i}: ms/step plain {x['plain']} gpuspy {x['gpuspy']} "
          f"scraped {x['prom']}; {x['scrapes_ok']}/{x['scrapes']} scrapes answered 200 "
          f"(slowest {x['scrape_max_s'] and round(x['scrape_max_s'], 4)} s); last scraped "
          f"tracked {x['last_tracked']}, report leaked {x['report_leaked']}, "
          f"last snapshot {x['snapshot_leaked']}")
r = res["ratio_prom_plain"]
verdict = "PASS" if r is not None and r <= 1.01 else "FAIL"
print(f"prom-workload: {verdict} step time ratio scraped/plain "
      f"{r if r is None else round(r, 4)} (target <= 1.01), scraped/gpuspy "
      f"{res['ratio_prom_gpuspy'] if res['ratio_prom_gpuspy'] is None else round(res['ratio_prom_gpuspy'], 4)}")
same = [x["last_tracked"] is not None and x["last_tracked"] == x["report_leaked"]
        for x in res["rounds"]]
print(f"prom-workload: {'PASS' if same and all(same) else 'FAIL'} the last scraped tracked "
      f"bytes equal the report's leaked bytes in {sum(same)} of {len(same)} rounds")
