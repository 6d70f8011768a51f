"""The simulator's chart: relevant documents found against judgements a topic, one line per judging order.

SVG is written by hand (no plotting library is installed with the project); PNG needs matplotlib,
used when it is installed.
"""

import html
import importlib.util
from pathlib import Path

from assessments.exporters.common import atomic_file

COLOURS = {"depth": "#555555", "mtf": "#1f77b4", "maxmean": "#ff7f0e", "active": "#2ca02c"}
OTHER_COLOURS = ["#d62728", "#9467bd", "#8c564b", "#e377c2"]
WIDTH, HEIGHT = 720, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 55
MAX_POINTS = 400


def write_plot(result, path) -> None:
    """Write the chart of a Simulation to `path` (.svg, or .png when matplotlib is installed)."""
    path = Path(path)
    if path.suffix.lower() == ".png":
        if importlib.util.find_spec("matplotlib") is None:
            raise RuntimeError("a PNG needs matplotlib, which is not installed; write an .svg instead")
        _png(result, path)
    else:
        with atomic_file(path) as handle:
            handle.write(svg(result))


def _title(result):
    return (f"Relevant found: {result.topics} topics, {result.candidates:,} candidates, {result.relevant:,} relevant "
            f"(depth {result.depth}, {len(result.runs)} runs)")


def _colour(name, n):
    return COLOURS.get(name, OTHER_COLOURS[n % len(OTHER_COLOURS)])


def _ticks(high, count=5):
    """Round tick values from 0 to at least `high`."""
    if high <= 0:
        return [0, 1]
    raw = high / count
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks, value = [], 0.0
    while value < high + step * 0.999:
        ticks.append(value)
        value += step
    return ticks


def svg(result) -> str:
    """The chart as an SVG document."""
    curves = {name: order.curve for name, order in result.orders.items()}
    width = max((len(c) - 1 for c in curves.values()), default=1) or 1
    xs, ys = _ticks(width), _ticks(max(result.relevant, 1))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + plot_w * x / xs[-1]

    def py(y):
        return TOP + plot_h * (1 - y / ys[-1])

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="13">{html.escape(_title(result))}</text>',
    ]
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{TOP}" x2="{px(x):.1f}" y2="{TOP + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{x:g}</text>')
    for y in ys:
        out.append(f'<line x1="{LEFT}" y1="{py(y):.1f}" x2="{LEFT + plot_w}" y2="{py(y):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    out.append(f'<line x1="{LEFT}" y1="{py(result.relevant):.1f}" x2="{LEFT + plot_w}" y2="{py(result.relevant):.1f}" '
               'stroke="#999" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 12}" text-anchor="middle">judgements per topic</text>')
    out.append(f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {TOP + plot_h / 2})">relevant found (all topics)</text>')
    for n, (name, curve) in enumerate(curves.items()):
        step = max(1, len(curve) // MAX_POINTS)
        points = " ".join(f"{px(x):.1f},{py(curve[x]):.1f}" for x in [*range(0, len(curve), step), len(curve) - 1])
        colour = _colour(name, n)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}">'
                   f"<title>{html.escape(name)}</title></polyline>")
        ly = TOP + 14 + 20 * n
        out.append(f'<line x1="{LEFT + plot_w + 12}" y1="{ly}" x2="{LEFT + plot_w + 36}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{LEFT + plot_w + 42}" y="{ly + 4}">{html.escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _png(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100)
    for n, (name, order) in enumerate(result.orders.items()):
        axes.plot(range(len(order.curve)), order.curve, label=name, color=_colour(name, n), linewidth=2)
    axes.axhline(result.relevant, color="#999", linestyle="--", linewidth=1)
    axes.set_xlabel("judgements per topic")
    axes.set_ylabel("relevant found (all topics)")
    axes.set_title(_title(result), fontsize=9)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
