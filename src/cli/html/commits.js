// SPDX-License-Identifier: MIT
// The page of gpuspy commits --format html: the data is the JSON of
// #gpuspy-data ("gpuspy-commits/1", docs/format.md); every string of it
// goes into the page as text, never as markup.
'use strict';

(function () {
	const data = JSON.parse(document.getElementById('gpuspy-data').textContent);
	const runs = data.runs;
	const COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b',
		'#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

	function size(v) {
		if (v === null || v === undefined)
			return '-';
		const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
		let i = 0;
		let x = v;
		while (Math.abs(x) >= 1024 && i < units.length - 1) {
			x /= 1024;
			i++;
		}
		return (i ? x.toFixed(1) : String(x)) + ' ' + units[i];
	}

	function el(tag, text, cls) {
		const e = document.createElement(tag);
		if (text !== undefined)
			e.textContent = text;
		if (cls)
			e.className = cls;
		return e;
	}

	function label(r, i) {
		return '#' + (i + 1) + ' ' + (r.commit ? r.commit.slice(0, 12) : '-');
	}

	document.getElementById('summary').textContent =
		runs.length + (runs.length === 1 ? ' run' : ' runs') + ', ' +
		({given: 'in the order given', time: 'by start time',
			commit: 'by commit date (git)'}[data.order] || data.order) + '.';

	// x: the runs' places; the axis labels them by commit
	const xs = runs.map((_, i) => i);
	function chart(target, series, values) {
		const width = Math.max(480, Math.min(1200, document.body.clientWidth - 40));
		const opts = {
			width: width,
			height: 320,
			// a run at each integer, from 0 bytes up
			scales: {
				x: {time: false, range: () => [-0.5, runs.length - 0.5]},
				y: {range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1]},
			},
			axes: [
				{splits: () => xs, values: (u, ticks) => ticks.map(t => label(runs[t], t)),
					grid: {show: false}},
				{values: (u, ticks) => ticks.map(size), size: 80},
			],
			series: [{label: 'run', value: (u, v) => v === null ? '-' :
				label(runs[v], v)}].concat(series.map((s, i) => ({
				label: s,
				stroke: COLORS[i % COLORS.length],
				width: 2,
				points: {show: true, size: 6},
				value: (u, v) => size(v),
			}))),
		};
		return new uPlot(opts, [xs].concat(values), document.getElementById(target));
	}

	const plots = [];
	plots.push(chart('totals', ['leaked at exit', 'peak'],
		[runs.map(r => r.leaked), runs.map(r => r.peak)]));
	if (data.sites.length) {
		document.getElementById('sites-note').textContent =
			'The ' + data.sites.length + ' call sites that peaked highest in any run; ' +
			'a gap where a run has no such site.';
		plots.push(chart('sites', data.sites.map(s => s.name),
			data.sites.map(s => s.peaks)));
	} else {
		document.getElementById('sites-note').textContent = 'No call site in any run.';
	}

	const table = document.getElementById('runs');
	const head = el('tr');
	['#', 'commit', 'started (UTC)', 'leaked at exit', 'peak', 'processes', 'path']
		.forEach(h => head.appendChild(el('th', h, h === 'path' ? 'name' : '')));
	table.appendChild(head);
	runs.forEach((r, i) => {
		const tr = el('tr');
		tr.appendChild(el('td', String(i + 1)));
		const c = el('td');
		c.appendChild(el('code', r.commit || '-'));
		c.title = r.commit_from ? 'from ' + r.commit_from : 'no commit recorded';
		tr.appendChild(c);
		tr.appendChild(el('td', r.start_time === null ? '?' :
			new Date(r.start_time * 1000).toISOString().replace('T', ' ').slice(0, 19)));
		tr.appendChild(el('td', size(r.leaked)));
		tr.appendChild(el('td', size(r.peak)));
		tr.appendChild(el('td', String(r.processes)));
		tr.appendChild(el('td', r.path, 'name'));
		table.appendChild(tr);
	});
	window.__gpuspyPlots = plots;
	window.__gpuspyReady = performance.now();
})();
