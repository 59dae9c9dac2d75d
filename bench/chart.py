"""The headline ratios of `make bench` as one SVG bar chart.

Plain SVG text, no plotting library: for every client of the sequential stdio table, one bar for
its calls/s over the raw baseline's and one for the C ABI's calls/s over its own, each the median
over interleaved rounds with a whisker over the range of rounds.
"""

from __future__ import annotations

from html import escape

BAR_H, GAP, LEFT, WIDTH, TOP = 14, 10, 250, 860, 58
AXIS_MAX = 6.0  # a client 20x slower would otherwise squash every other bar to a few pixels
COLOURS = {"raw": "#4c78a8", "ours": "#f58518"}


def _bar(y: float, cmp: dict, scale: float, colour: str, text: str) -> list[str]:
    # Values past the axis end (AXIS_MAX) are drawn to the end; the label keeps the real value.
    v, lo, hi = (min(cmp[k], AXIS_MAX) for k in ("value", "lo", "hi"))
    if cmp["hi"] > AXIS_MAX:
        text += f" (range to {cmp['hi']:.1f}, past the axis end)"
    x0 = LEFT
    out = [f'<rect x="{x0}" y="{y:.1f}" width="{v * scale:.1f}" height="{BAR_H}" fill="{colour}"/>',
           f'<line x1="{x0 + lo * scale:.1f}" y1="{y + BAR_H / 2:.1f}" x2="{x0 + hi * scale:.1f}" '
           f'y2="{y + BAR_H / 2:.1f}" stroke="#222" stroke-width="1.2"/>']
    for x in (lo, hi):
        out.append(f'<line x1="{x0 + x * scale:.1f}" y1="{y + 3:.1f}" x2="{x0 + x * scale:.1f}" '
                   f'y2="{y + BAR_H - 3:.1f}" stroke="#222" stroke-width="1.2"/>')
    out.append(f'<text x="{x0 + max(v, hi) * scale + 6:.1f}" y="{y + BAR_H - 3:.1f}">{escape(text)}</text>')
    return out


def svg(rows: list[tuple[str, dict | None, dict | None]], subtitle: str) -> str:
    """rows: (client label, its calls/s over raw, C ABI's calls/s over its) as compare() dicts."""
    top = min(AXIS_MAX, max([c["hi"] for _, a, b in rows for c in (a, b) if c] + [1.0]))
    scale = (WIDTH - LEFT - 200) / top
    height = TOP + len(rows) * (2 * BAR_H + GAP) + 40
    L = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
         '<text x="10" y="18" font-size="14" font-weight="bold">Sequential tools/call over stdio: '
         'ratios of calls/s</text>',
         f'<text x="10" y="34">{escape(subtitle)}</text>',
         f'<rect x="{LEFT}" y="42" width="10" height="10" fill="{COLOURS["raw"]}"/>'
         f'<text x="{LEFT + 14}" y="51">client ÷ raw C baseline</text>',
         f'<rect x="{LEFT + 180}" y="42" width="10" height="10" fill="{COLOURS["ours"]}"/>'
         f'<text x="{LEFT + 194}" y="51">mcp_client C ABI ÷ client</text>']
    y = TOP
    for name, vs_raw, vs_ours in rows:
        L.append(f'<text x="{LEFT - 8}" y="{y + BAR_H + 4:.1f}" text-anchor="end">{escape(name)}</text>')
        if vs_raw:
            L += _bar(y, vs_raw, scale, COLOURS["raw"], f"{vs_raw['value']:.2f}")
        if vs_ours:
            L += _bar(y + BAR_H, vs_ours, scale, COLOURS["ours"], f"{vs_ours['value']:.2f}")
        y += 2 * BAR_H + GAP
    # The 1.0 line: equal to raw (blue) or to the C ABI (orange).
    L.append(f'<line x1="{LEFT + scale:.1f}" y1="{TOP - 4}" x2="{LEFT + scale:.1f}" y2="{y}" stroke="#888" '
             'stroke-dasharray="3,3"/>')
    L.append(f'<text x="{LEFT + scale:.1f}" y="{y + 14}" text-anchor="middle" fill="#555">1.0</text>')
    L.append(f'<text x="10" y="{height - 8}" fill="#555">Bars: median over interleaved rounds; whiskers: '
             'range over rounds. Source: bench/run.py (make bench).</text>')
    L.append("</svg>")
    return "\n".join(L) + "\n"
