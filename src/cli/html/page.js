/* SPDX-License-Identifier: MIT */
/*
 * gpuspy report --format html: draws the data of #gpuspy-data
 * ("gpuspy-html/1", docs/format.md).  Every string of it comes from files
 * the command read and is inserted as text (textContent, title), never as
 * markup.
 */
(function () {
	"use strict";
	const D = JSON.parse(document.getElementById("gpuspy-data").textContent);
	const R = D.report;
	const COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
		"#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#8cd17d", "#d4a6c8"];
	const OTHER_COLOR = "#bab0ac";
	let proc = 0; /* the process the timeline, stacks and ledger show; -1: all */
	let plot = null;

	function clean(s) { return String(s).replace(/[\u0000-\u001f\u007f-\u009f]/g, "?"); }
	function el(tag, text, cls) {
		const e = document.createElement(tag);
		/* control characters of the input shown as '?', as the text
		 * report does */
		if (text !== undefined && text !== null)
			e.textContent = clean(text);
		if (cls)
			e.className = cls;
		return e;
	}
	function byId(id) { return document.getElementById(id); }
	function size(b) {
		if (b === null || b === undefined)
			return "";
		const u = ["B", "KiB", "MiB", "GiB", "TiB"];
		let v = Math.abs(b), i = 0;
		while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
		return (b < 0 ? "-" : "") + (i ? v.toFixed(1) : String(v)) + " " + u[i];
	}
	/* an axis tick: a power of two of bytes reads whole ("256 MiB") */
	function tick(b) {
		const u = ["B", "KiB", "MiB", "GiB", "TiB"];
		let v = Math.abs(b), i = 0;
		while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
		const t = Number.isInteger(v) ? String(v) : v.toFixed(1);
		return (b < 0 ? "-" : "") + t + " " + u[i];
	}
	/* the steps of the bytes axis: powers of two, 1 B to 1 PiB */
	const BINARY_STEPS = Array.from({ length: 51 }, (_, i) => Math.pow(2, i));
	function basename(p) { const i = p.lastIndexOf("/"); return i < 0 ? p : p.slice(i + 1); }
	function frameText(f) {
		if (!f)
			return "?";
		let s = f.function || (f.module ? basename(f.module) : "") +
			"+0x" + (f.offset || 0).toString(16);
		if (f.file)
			s += " (" + basename(f.file) + (f.line ? ":" + f.line : "") + ")";
		else if (f.module && f.function)
			s += " (" + basename(f.module) + ")";
		return s;
	}
	/* a site's one name, as every other surface prints it (docs/format.md, "name") */
	function nameOf(s) { return s.name || (s.headline ? frameText(s.headline) : "(no stack)"); }
	function siteName(i) {
		const s = R.sites[i];
		if (!s)
			return "site ?";
		return nameOf(s);
	}
	function siteLabel(s) { return s.library || s.pool || ""; }
	function procName(i) {
		const p = D.processes[i];
		return p ? p.name + " (" + p.host + "-" + p.pid + ")" : "all processes";
	}
	function row(table, cells, head) {
		const tr = el("tr");
		for (const c of cells) {
			const td = el(head ? "th" : "td");
			if (c instanceof Node) {
				td.appendChild(c);
			} else if (typeof c === "object" && c !== null) {
				td.textContent = clean(c.text);
				if (c.num)
					td.className = "num";
				if (c.title)
					td.title = c.title;
				if (c.sort !== undefined && !Number.isNaN(c.sort))
					td.dataset.sort = String(c.sort);
			} else {
				td.textContent = c === undefined || c === null ? "" : clean(c);
			}
			tr.appendChild(td);
		}
		table.appendChild(tr);
		return tr;
	}
	/* V shown as TEXT, sorted by V (a number: bytes, a count) */
	function num(v, title, sortBy) {
		return { text: v, num: true, title: title, sort: sortBy === undefined ? Number(v) : sortBy };
	}
	function bytesCell(b, title) { return num(size(b), title, b); }
	/* A table whose header sorts it (click: descending, again: ascending)
	 * and whose rows a filter above it narrows to those holding its text:
	 * the page stays usable with thousands of sites. */
	function tableTools(t, label) {
		const head = t.rows[0];
		if (!head || t.dataset.tools)
			return;
		t.dataset.tools = "1";
		const input = el("input");
		input.type = "search";
		input.placeholder = "filter " + label;
		input.className = "filter";
		input.addEventListener("input", () => {
			const q = input.value.toLowerCase();
			let shown = 0;
			for (let i = 1; i < t.rows.length; i++) {
				const hit = !q || t.rows[i].textContent.toLowerCase().indexOf(q) >= 0;
				t.rows[i].style.display = hit ? "" : "none";
				shown += hit;
			}
			input.title = shown + " of " + (t.rows.length - 1) + " rows";
		});
		t.parentNode.insertBefore(input, t);
		Array.from(head.cells).forEach((th, col) => {
			th.classList.add("sortable");
			th.title = "sort by " + th.textContent;
			th.addEventListener("click", () => {
				const down = th.dataset.dir !== "down";
				Array.from(head.cells).forEach((h) => { delete h.dataset.dir; });
				th.dataset.dir = down ? "down" : "up";
				const rows = Array.from(t.rows).slice(1);
				const key = (r) => {
					const c = r.cells[col];
					if (!c)
						return "";
					return c.dataset.sort !== undefined ? Number(c.dataset.sort) : c.textContent.toLowerCase();
				};
				rows.sort((a, b) => {
					const x = key(a), y = key(b);
					const o = typeof x === "number" && typeof y === "number" ? x - y :
						String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
					return down ? -o : o;
				});
				for (const r of rows)
					t.appendChild(r);
			});
		});
	}
	function spreadText(sp, bytes) {
		if (!sp)
			return "";
		const f = bytes ? size : String;
		let s = f(sp.min) + " / " + f(sp.median) + " / " + f(sp.max);
		if (sp.outlier !== undefined)
			s += "; outlier: " + procName(sp.outlier);
		return s;
	}

	/* header and processes */
	function summary() {
		const n = R.processes.length;
		/* what the framework pools hold is their cache, said apart from
		 * what the program's own code left */
		const own = R.leaked.program || R.leaked, pools = R.leaked.pools;
		byId("summary").textContent = size(own.bytes) + " of GPU memory in " +
			own.allocations + " allocations still live at exit" +
			(pools && pools.bytes ? " from the program's own code, " + size(pools.bytes) +
				" in " + pools.allocations + " segments held by " +
				Object.keys(pools.by_pool).map((k) => "the " + k).join(" and ") + " (the framework's cache, not a leak)" : "") +
			", peak " + size(R.peak.bytes) + "; " + n + (n === 1 ? " process" : " processes") +
			(R.oom.length ? "; " + R.oom.length + " out-of-memory events" : "") +
			(R.limit ? "; " + R.limit.text + " (GPUSPY_LIMIT)" : "");
		/* processes of the run that could not be read: said, not drawn */
		if (R.unreadable && R.unreadable.length) {
			const k = R.unreadable.length, total = k + n;
			const ul = el("ul");
			byId("unreadable").appendChild(el("p", k + " of " + total +
				(total === 1 ? " process" : " processes") +
				" could not be read, left out of every figure:", "note"));
			R.unreadable.forEach((u) => ul.appendChild(el("li", u.path + ": " + u.reason)));
			byId("unreadable").appendChild(ul);
		}
		const sel = byId("proc");
		if (n > 1)
			sel.appendChild(new Option("all processes (stacks, leaks)", "-1"));
		D.processes.forEach((p, i) => sel.appendChild(new Option(clean(procName(i)), String(i))));
		/* several processes: their sum first, where it can be drawn */
		proc = n > 1 ? -1 : 0;
		sel.value = String(proc);
		sel.addEventListener("change", () => { proc = Number(sel.value); drawProcess(); });
		const t = byId("procs");
		row(t, ["process", "host", "pid", "rank", "leaked", "peak", "state", "command"], true);
		tableTools(t, "processes");
		R.processes.forEach((p) => {
			row(t, [p.path, p.host, num(p.pid), p.rank === undefined ? "" : num(p.rank),
				bytesCell(p.leaked.bytes), bytesCell(p.peak.bytes),
				p.state === "exec" ? "replaced by exec (program " + p.image + " of pid " + p.pid + ")" :
				p.state ? p.state + (p.signal ? " (signal " + p.signal + ")" : "") :
					(p.partial ? "partial: " + basename(p.report) : "exited"),
				p.command.join(" ")]);
		});
	}

	/* the timeline: the sites' bands stacked (the top ones, the rest as
	 * one), the devices, NVML and the PyTorch pool as lines */
	function timelineSeries(p) {
		const top = D.top > 0 ? D.top : Infinity;
		const sites = p.bands.filter((b) => b.kind === "site");
		const peakOf = (b) => b.v.reduce((m, x) => (x > m ? x : m), 0);
		sites.sort((a, b) => peakOf(b) - peakOf(a) || a.site - b.site);
		const shown = sites.slice(0, top);
		const rest = p.bands.filter((b) => shown.indexOf(b) < 0);
		/* a legend entry stays one line: C++ names can run to a
		 * kilobyte (the tables below give them whole) */
		const brief = (t) => (t.length > 90 ? t.slice(0, 89) + "\u2026" : t);
		const bands = shown.map((b, i) => ({ label: "#" + (b.site + 1) + " " + brief(siteName(b.site)),
			v: b.v, color: COLORS[i % COLORS.length], site: b.site }));
		if (rest.length) {
			const v = p.t.map((_, i) => rest.reduce((s, b) => s + (b.v[i] || 0), 0));
			const dev = rest.every((b) => b.kind === "device");
			bands.push({ label: dev ? "GPU memory" : "other sites", v: v, color: OTHER_COLOR });
		}
		const lines = p.lines.map((l) => ({
			label: l.kind === "device" ? "GPU memory, device " + l.key :
				l.kind === "nvml" ? "NVML: used by the process, GPU " + l.key :
				l.kind === "pool_reserved" ? "PyTorch pool reserved, device " + l.key :
				"PyTorch pool allocated, device " + l.key,
			v: l.v, kind: l.kind,
		})).filter((l) => l.kind !== "device" || p.lines.filter((x) => x.kind === "device").length > 1);
		return { bands: bands, lines: lines };
	}

	function eventsPlugin(p) {
		const colors = { mark: "#0a6", snapshot: "#06c", oom: "#c00", peak: "#a50" };
		return {
			hooks: {
				draw: [(u) => {
					const ctx = u.ctx;
					ctx.save();
					ctx.lineWidth = 1.5 * devicePixelRatio;
					for (const ev of p.events) {
						const x = Math.round(u.valToPos(ev.t, "x", true));
						ctx.strokeStyle = colors[ev.kind];
						ctx.setLineDash(ev.kind === "snapshot" ? [4, 4] : []);
						ctx.beginPath();
						ctx.moveTo(x, u.bbox.top);
						ctx.lineTo(x, u.bbox.top + u.bbox.height);
						ctx.stroke();
					}
					ctx.restore();
				}],
			},
		};
	}

	function eventText(ev) {
		const t = ev.t.toFixed(3) + " s: ";
		switch (ev.kind) {
		case "mark": return t + "mark \"" + ev.label + "\", " + size(ev.bytes) + " live";
		case "snapshot": return t + "snapshot " + ev.number + (ev.label ? " (" + ev.label + ")" : "");
		case "oom": return t + "out of memory " + ev.number + ": " + ev.label + " of " +
			size(ev.bytes) + (ev.device >= 0 ? " on device " + ev.device : "");
		default: return t + "peak, " + size(ev.bytes);
		}
	}

	function drawTimeline() {
		const box = byId("timeline");
		if (plot) { plot.destroy(); plot = null; }
		box.textContent = "";
		const ul = byId("events");
		ul.textContent = "";
		const p = D.processes[proc < 0 ? 0 : proc];
		if (!p || p.t.length === 0) {
			byId("timeline-note").textContent = "No samples of this process.";
			return;
		}
		const s = timelineSeries(p);
		byId("timeline-note").textContent = clean(procName(proc < 0 ? 0 : proc) +
			(proc < 0 ? " (each process has its own timeline: choose one above)" : "") + ": " +
			(p.history ? "from its history.jsonl" : "no history.jsonl: the moments its report keeps") +
			(p.downsampled ? "; cut to " + p.t.length + " points (the lowest and highest value of each of 1,000 columns)" : "") +
			". Seconds since " + new Date(D.start * 1000).toISOString() + ".");
		/* uPlot draws series in order and fills each down to 0: the
		 * stack's sums are drawn from the top band down */
		const own = [];
		const data = [p.t];
		const series = [{ label: "time", value: (u, v) => (v === null || v === undefined ? "" : v.toFixed(1) + " s") }];
		const cum = p.t.map(() => 0);
		const sums = s.bands.map((b) => b.v.map((x, i) => (cum[i] += x || 0)));
		for (let k = s.bands.length - 1; k >= 0; k--) {
			const b = s.bands[k];
			data.push(sums[k]);
			own.push(b.v);
			series.push({ label: clean(b.label), stroke: b.color, fill: b.color, width: 1,
				points: { show: false },
				value: (u, v, si, i) => (i === null || i === undefined ? "" : size(own[si - 1][i])) });
		}
		s.lines.forEach((l, k) => {
			data.push(l.v);
			own.push(l.v);
			series.push({ label: clean(l.label), stroke: ["#000", "#555", "#1b5e20", "#6a1b9a"][k % 4],
				width: 2, dash: l.kind === "nvml" ? [6, 3] : l.kind.startsWith("pool") ? [2, 2] : [],
				points: { show: false }, spanGaps: false,
				value: (u, v) => size(v) });
		});
		const width = Math.max(600, Math.min(box.clientWidth || 1100, 1400));
		plot = new uPlot({
			width: width, height: 360,
			scales: { x: { time: false } },
			axes: [{ label: "seconds" },
				{ values: (u, vals) => vals.map(tick), incrs: BINARY_STEPS, size: 80 }],
			series: series,
			legend: { live: true },
			plugins: [eventsPlugin(p)],
		}, data, box);
		for (const ev of p.events) {
			const li = el("li", eventText(ev), ev.kind);
			ul.appendChild(li);
		}
	}

	/* the stacks of one moment as an icicle: the root on top */
	function fold(frames) {
		const kept = frames.filter((f) => !f.noise);
		return kept.length ? kept : frames;
	}
	let flameRoot = null;
	function buildTree(st) {
		const root = { name: "all", bytes: 0, kids: new Map(), cls: "root" };
		for (const [p, si, bytes] of st.samples) {
			if (proc >= 0 && p !== proc)
				continue;
			const s = R.sites[si];
			if (!s)
				continue;
			const frames = fold(s.frames).slice().reverse();
			let n = root;
			n.bytes += bytes;
			const path = frames.map((f) => ({ name: frameText(f), cls: f.kind === "python" ? "python" : "native" }));
			const label = siteLabel(s);
			path.push({ name: s.api + (label ? " [" + label + "]" : ""),
				cls: s.library ? "library" : s.pool ? "pool" : "api" });
			for (const step of path) {
				let k = n.kids.get(step.name);
				if (!k) {
					k = { name: step.name, bytes: 0, kids: new Map(), cls: step.cls, parent: n };
					n.kids.set(step.name, k);
				}
				k.bytes += bytes;
				n = k;
			}
		}
		return root;
	}
	function drawFlame() {
		const box = byId("flame");
		box.textContent = "";
		const st = D.stacks[Number(byId("moment").value)];
		if (!st) {
			byId("flame-note").textContent = "No moment with stacks.";
			return;
		}
		const root = flameRoot || buildTree(st);
		byId("flame-note").textContent = clean(size(root.bytes) + " live " +
			(st.state === "exit" ? "at exit (or the last snapshot)" : st.state === "peak" ? "at the peak" : "at mark \"" + st.label + "\"") +
			", " + (proc < 0 ? "all processes" : procName(proc)) +
			(flameRoot ? "; click the top bar to zoom out" : "; click a bar to zoom in"));
		if (root.bytes <= 0)
			return;
		const width = box.clientWidth || 1100;
		let depth = 0;
		const place = (n, x, d) => {
			const w = n.bytes / root.bytes;
			if (w * width < 2)
				return;
			depth = Math.max(depth, d);
			const div = el("div", n.name, n.cls);
			div.style.left = (x * 100) + "%";
			div.style.width = (w * 100) + "%";
			div.style.top = (d * 18) + "px";
			div.title = clean(n.name) + ": " + size(n.bytes);
			div.addEventListener("click", () => {
				flameRoot = n === root ? (n.parent || null) : n;
				if (flameRoot && !flameRoot.parent)
					flameRoot = null;
				drawFlame();
			});
			box.appendChild(div);
			let cx = x;
			const kids = Array.from(n.kids.values()).sort((a, b) => b.bytes - a.bytes);
			for (const k of kids) {
				place(k, cx, d + 1);
				cx += k.bytes / root.bytes;
			}
		};
		place(root, 0, 0);
		box.style.height = ((depth + 1) * 18 + 2) + "px";
	}
	function moments() {
		const sel = byId("moment");
		let pick = 0;
		D.stacks.forEach((st, i) => {
			const name = st.state === "exit" ? "at exit" : st.state === "peak" ? "at the peak" : "mark: " + st.label;
			sel.appendChild(new Option(clean(name) + " (" + size(st.live_bytes) + ")", String(i)));
			if (st.state === D.show.state && (st.state !== "mark" || st.label === D.show.label))
				pick = i;
		});
		sel.value = String(pick);
		sel.addEventListener("change", () => { flameRoot = null; drawFlame(); });
	}

	/* the tables */
	function frameList(s) {
		const ol = el("ol", null, "frames");
		for (const f of fold(s.frames))
			ol.appendChild(el("li", frameText(f) + (f.kind === "python" ? " [python]" : "")));
		return ol;
	}
	function siteCell(s) {
		const d = el("details");
		d.appendChild(el("summary", nameOf(s)));
		d.appendChild(frameList(s));
		return d;
	}
	function leaks() {
		const t = byId("leaks");
		const several = R.processes.length > 1;
		const list = R.sites.filter((s) => s.leaked_bytes > 0);
		const head = ["leaked", "allocations", "site", "api", "kind", "label", "processes"];
		if (several)
			head.push("leaked per process: min / median / max");
		row(t, head, true);
		list.forEach((s) => {
			const cells = [bytesCell(s.leaked_bytes, s.leaked_bytes + " bytes"), num(s.leaked_allocations),
				siteCell(s), s.api, s.kind, siteLabel(s), num(s.processes)];
			if (several)
				cells.push(spreadText(s.spread && s.spread.leaked, true));
			row(t, cells).className = "leak";
		});
		byId("leak-note").textContent = list.length === 0 ? "Nothing leaked." : "";
		if (list.length)
			tableTools(t, "leaked sites");
	}
	function sparkline(samples) {
		const NS = "http://www.w3.org/2000/svg";
		const svg = document.createElementNS(NS, "svg");
		const w = 120, h = 24;
		svg.setAttribute("class", "spark");
		svg.setAttribute("width", String(w));
		svg.setAttribute("height", String(h));
		if (samples.length > 1) {
			const t0 = samples[0][0], t1 = samples[samples.length - 1][0];
			const vmax = Math.max(1, ...samples.map((x) => x[1]));
			const pts = samples.map((x) => ((x[0] - t0) / (t1 - t0 || 1) * (w - 2) + 1).toFixed(1) + "," +
				(h - 1 - x[1] / vmax * (h - 2)).toFixed(1));
			const pl = document.createElementNS(NS, "polyline");
			pl.setAttribute("points", pts.join(" "));
			pl.setAttribute("fill", "none");
			pl.setAttribute("stroke", "#c00");
			svg.appendChild(pl);
		}
		return svg;
	}
	/* The PyTorch view's growing lines: where it names the tensors' line,
	 * that line is the verdict, and a pool segment that grew is its
	 * consequence */
	// a PyTorch view line's name; one from gpuspy's record of its segment says so
	function torchName(s) {
		if (!s.headline)
			return "(before the view started)";
		return nameOf(s) + (s.source === "segment" ? " (from gpuspy's record of its segment)" : "");
	}
	function torchGrowing() { return R.torch ? R.torch.sites.filter((s) => s.growing && s.headline) : []; }
	/* the verdict every surface says: growing, or grew then stopped */
	function verdictText(s) {
		return s.growing ? "growing" : s.stopped ? "grew, then stopped" : "";
	}
	function growth() {
		const t = byId("growth");
		/* the call sites and the PyTorch view's lines the rule flagged,
		 * what keeps growing first: one verdict with the tables below */
		const list = R.sites.filter((s) => s.growing || s.stopped);
		const lines = R.torch ? R.torch.sites.filter((s) => s.growing || s.stopped) : [];
		const tensors = torchGrowing().length > 0;
		list.sort((a, b) => (b.growing ? 1 : 0) - (a.growing ? 1 : 0));
		lines.sort((a, b) => (b.growing ? 1 : 0) - (a.growing ? 1 : 0));
		if (!list.length && !lines.length) {
			t.parentNode.insertBefore(el("p", "No site or PyTorch line keeps growing.", "note"), t);
			return;
		}
		row(t, ["verdict", "rate", "since", "shape", "history", "live", "site", "api"], true);
		const since = (g) => g && g.since_s !== null ? g.since_s.toFixed(g.since_s < 10 ? 1 : 0) + " s" +
			(g.stopped ? " to " + g.until_s.toFixed(g.until_s < 10 ? 1 : 0) + " s" : "") : "";
		const rate = (g) => num(g ? size(g.rate_bytes_per_s * 60) + "/min" : "", undefined,
			g ? g.rate_bytes_per_s : 0);
		for (const s of lines) {
			const g = s.growth;
			row(t, [verdictText(s), rate(g), num(since(g), undefined, g && g.since_s !== null ? g.since_s : -1),
				g ? g.shape : "", "", bytesCell(s.live_bytes),
				torchName(s) + " [PyTorch view]",
				""]).className = s.growing ? "growing" : "stopped";
		}
		for (const s of list) {
			const g = s.growth;
			const cell = siteCell(s);
			if (tensors && s.pool)
				cell.appendChild(el("div", "the pool grew for the PyTorch tensors above: a consequence", "note"));
			row(t, [verdictText(s), rate(g), num(since(g), undefined, g && g.since_s !== null ? g.since_s : -1),
				g ? g.shape : "", g ? sparkline(g.samples) : "",
				bytesCell(s.leaked_bytes), cell, s.api]).className = s.growing ? "growing" : "stopped";
		}
		tableTools(t, "growing sites");
	}
	/* The page's first lines: what leaks, what grows, at which line; the
	 * tables below say the same at length */
	function verdict() {
		const ul = byId("verdict-list");
		const add = (text, cls) => ul.appendChild(el("li", text, cls));
		const lines = torchGrowing();
		for (const s of lines.slice(0, 3))
			add("Growing: " + nameOf(s) + ", " + size(s.live_bytes) + " live in " + s.live_blocks +
				" PyTorch tensor blocks (PyTorch view)", "growing");
		const grow = R.sites.filter((s) => s.growing && !(lines.length && s.pool));
		for (const s of grow.slice(0, 3)) {
			const g = s.growth;
			add("Growing: " + nameOf(s) + (g ? ", " + size(g.rate_bytes_per_s * 60) + "/min" +
				(g.since_s !== null ? " since " + g.since_s.toFixed(0) + " s" : "") +
				(g.shape ? " (" + g.shape + ")" : "") : "") + ", " + size(s.leaked_bytes) + " live", "growing");
		}
		const pools = R.sites.filter((s) => s.growing && s.pool && lines.length);
		if (pools.length)
			add("The " + pools[0].pool + "'s segments grew with them (" + nameOf(pools[0]) +
				"): a consequence of the tensors above, not a line to change.", "note");
		const own = R.sites.filter((s) => s.leaked_bytes > 0 && !s.pool && !s.library);
		for (const s of own.slice(0, 3))
			add("Leaked at exit: " + size(s.leaked_bytes) + " in " + s.leaked_allocations + " by " +
				nameOf(s), "leak");
		const held = R.sites.filter((s) => s.leaked_bytes > 0 && (s.pool || s.library));
		if (held.length) {
			const b = held.reduce((a, s) => a + s.leaked_bytes, 0);
			add("Held at exit by pools and libraries (not the program's own leak): " + size(b), "note");
		}
		/* the verdicts PyTorch's own figures decided first: a framework's
		 * failed requests come in bursts, and its last one says why */
		const said = new Set();
		const ooms = R.oom.filter((o) => o.verdict && o.verdict.pool_reserved_bytes !== undefined)
			.concat(R.oom.filter((o) => !(o.verdict && o.verdict.pool_reserved_bytes !== undefined)));
		for (const o of ooms) {
			const why = o.verdict ? o.verdict.line : "";
			if (said.size === 3 || (why && said.has(why)))
				continue;
			said.add(why || String(said.size));
			add("Out of memory: " + o.api + " of " + size(o.requested_bytes) +
				(o.device >= 0 ? " on device " + o.device : "") +
				(o.requested_by_name ? " at " + o.requested_by_name : "") +
				(why ? ". Why: " + why : ""), "oom");
		}
		if (!ul.children.length)
			add("Nothing leaked, nothing keeps growing, no allocation failed.", "ok");
	}
	function torch() {
		const T = R.torch;
		const t = byId("torch");
		if (!T) {
			byId("torch-note").textContent = "No PyTorch view in these processes.";
			return;
		}
		byId("torch-note").textContent = "PyTorch's caching allocator: " + size(T.reserved_bytes) +
			" reserved, " + size(T.allocated_bytes) + " in tensors" +
			(T.final ? " at exit" : " at its last sample") + ", " + T.processes +
			(T.processes === 1 ? " process" : " processes") + ".";
		row(t, ["live", "blocks", "peak", "growing", "line"], true);
		tableTools(t, "lines");
		for (const s of T.sites) {
			const d = el("details");
			d.appendChild(el("summary", torchName(s)));
			const ol = el("ol", null, "frames");
			for (const f of s.frames)
				ol.appendChild(el("li", frameText(f)));
			d.appendChild(ol);
			row(t, [bytesCell(s.live_bytes), num(s.live_blocks), bytesCell(s.peak_bytes),
				verdictText(s), d]);
		}
	}
	function ooms() {
		const box = byId("oom");
		if (!R.oom.length) {
			box.appendChild(el("p", "No allocation failed for lack of memory.", "note"));
			return;
		}
		for (const o of R.oom) {
			const div = el("div", null, "oom-event");
			div.appendChild(el("h3", "Out of memory " + o.number + " in " + o.process + " (pid " + o.pid + ")"));
			div.appendChild(el("p", o.api + " of " + size(o.requested_bytes) + " (" + o.kind + ") on device " +
				o.device + (o.requested_by_name ? ", by " + o.requested_by_name :
					o.requested_by ? ", by " + frameText(o.requested_by) : "") +
				"; gpuspy tracked " + size(o.live_bytes) + " live" +
				(o.free_bytes >= 0 ? ", the device had " + size(o.free_bytes) + " free of " + size(o.total_bytes) : "") +
				(o.untracked_bytes !== undefined ? ", " + size(o.untracked_bytes) + " used beyond what gpuspy tracked" : "")));
			const v = o.verdict;
			if (v) {
				div.appendChild(el("p", "Why (" + v.class + "): " + v.line, "oom-verdict"));
				const ul = el("ul");
				for (const p of v.pinned_by || [])
					ul.appendChild(el("li", "pinned by " + p.name + ": " + size(p.bytes) + " in " +
						p.blocks + (p.blocks === 1 ? " block" : " blocks")));
				if (v.class !== "fragmentation")
					for (const p of v.held_by || [])
						ul.appendChild(el("li", "held by " + p.name + ": " + size(p.bytes) + " in " +
							p.blocks + (p.blocks === 1 ? " block" : " blocks")));
				for (const p of v.other_processes || [])
					ul.appendChild(el("li", "other process: pid " + p.pid +
						(p.name ? " (" + p.name + ")" : "") + " holds " + size(p.used_bytes)));
				if (ul.children.length)
					div.appendChild(ul);
			}
			const t = el("table");
			row(t, ["live then", "site", "label"], true);
			for (const s of o.top_sites)
				row(t, [bytesCell(s.live_bytes), nameOf(s), siteLabel(s)]);
			div.appendChild(t);
			box.appendChild(div);
		}
	}
	function ledger() {
		const t = byId("ledger");
		t.textContent = "";
		row(t, ["device", "tracked by gpuspy", "PyTorch pool", "NVML: this process", "beyond tracked",
			"other processes", "GPU"], true);
		const list = proc < 0 ? D.processes.map((_, i) => i) : [proc];
		if (!list.some((i) => D.processes[i].ledger.length)) {
			row(t, ["nothing known: the report names no device"]);
			return;
		}
		for (const i of list) {
			for (const d of D.processes[i].ledger) {
				const by = d.by_label ? Object.entries(d.by_label).sort((a, b) => b[1] - a[1])
					.map(([k, v]) => k + " " + size(v)).join(", ") : "";
				const slack = d.pool_reserved_bytes !== undefined ?
					size(d.pool_reserved_bytes) + " reserved, " + size(d.pool_allocated_bytes) +
					" in tensors, slack " + size(d.pool_reserved_bytes - d.pool_allocated_bytes) : "";
				const nv = d.nvml_process_bytes;
				const others = d.other_processes || [];
				row(t, [(list.length > 1 ? procName(i) + ", " : "") + "device " + d.device,
					size(d.tracked_bytes) + (by ? " (" + by + ")" : ""), slack,
					nv !== undefined ? size(nv) : "",
					nv !== undefined ? size(Math.max(0, nv - d.tracked_bytes)) + " (CUDA context, untracked)" : "",
					others.map((o) => "pid " + o.pid + " " + size(o.used_bytes)).join(", "),
					(d.name || "") + (d.nvml_used_bytes !== undefined ? " " + size(d.nvml_used_bytes) + " of " +
						size(d.nvml_total_bytes) + " used" : d.total_bytes ? " " + size(d.total_bytes) : "")]);
			}
		}
	}

	function drawProcess() {
		flameRoot = null;
		drawTimeline();
		drawFlame();
		ledger();
	}

	verdict();
	summary();
	moments();
	leaks();
	growth();
	torch();
	ooms();
	drawProcess();
	/* for scripts that drive the page: when it was drawn, in ms since
	 * the navigation started.  uPlot draws in a microtask, the browser
	 * paints after the next animation frame: the time is taken after
	 * that paint. */
	requestAnimationFrame(() => setTimeout(() => {
		window.__gpuspyReady = performance.now();
		document.body.setAttribute("data-ready", "1");
	}, 0));
})();
