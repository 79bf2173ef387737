//! A hand-rolled SVG chart: throughput by requests in flight per server (one panel per
//! revision), and latency percentiles at 1 in flight. Log scales: the servers differ by orders
//! of magnitude.

use std::fmt::Write as _;

use crate::config::Revision;
use crate::report::Summary;

const WIDTH: f64 = 1000.0;
const PANEL_HEIGHT: f64 = 300.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 50.0;
const PALETTE: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

struct Series {
    name: String,
    color: String,
}

struct Group {
    label: String,
    bars: Vec<(usize, f64)>,
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn short(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn panel(out: &mut String, y0: f64, title: &str, unit: &str, series: &[Series], groups: &[Group]) {
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.1))
        .filter(|v| *v > 0.0)
        .collect();
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="{:.1}" font-size="16" font-weight="bold">{}</text>"#,
        y0 + 22.0,
        esc(title)
    );
    if values.is_empty() {
        return;
    }
    // A little below the smallest value, so no bar sits exactly on the axis.
    let lo = (values.iter().copied().fold(f64::MAX, f64::min).log10() - 0.2).floor();
    let hi = values
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .log10()
        .ceil()
        .max(lo + 1.0);
    let plot_top = y0 + TOP;
    let plot_bottom = y0 + PANEL_HEIGHT - BOTTOM;
    let y = |v: f64| plot_bottom - (v.log10() - lo) / (hi - lo) * (plot_bottom - plot_top);
    // Legend.
    let mut lx = LEFT;
    for s in series {
        let _ = writeln!(
            out,
            r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"#,
            y0 + 32.0,
            s.color,
            lx + 16.0,
            y0 + 43.0,
            esc(&s.name)
        );
        lx += 24.0 + 7.0 * s.name.len() as f64;
    }
    // Decade grid.
    let mut decade = lo;
    while decade <= hi + 1e-9 {
        let v = 10f64.powf(decade);
        let gy = y(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{gy:.1}" x2="{:.1}" y2="{gy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            gy + 4.0,
            short(v)
        );
        decade += 1.0;
    }
    let _ = writeln!(
        out,
        r#"<text x="16" y="{:.1}" font-size="12" transform="rotate(-90 16 {:.1})" text-anchor="middle">{}</text>"#,
        (plot_top + plot_bottom) / 2.0,
        (plot_top + plot_bottom) / 2.0,
        esc(unit)
    );
    let slot = (WIDTH - LEFT - RIGHT) / groups.len().max(1) as f64;
    for (i, group) in groups.iter().enumerate() {
        let gx = LEFT + slot * i as f64;
        let n = group.bars.len().max(1) as f64;
        let bar = ((slot - 16.0) / n).min(60.0);
        let start = gx + (slot - bar * n) / 2.0;
        for (j, (series_index, v)) in group.bars.iter().enumerate() {
            let x = start + bar * j as f64;
            let top = y(v.max(10f64.powf(lo)));
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                (bar - 2.0).max(1.0),
                plot_bottom - top,
                series[*series_index].color,
                esc(&series[*series_index].name),
                short(*v)
            );
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#,
                x + bar / 2.0 - 1.0,
                top - 3.0,
                short(*v)
            );
        }
        // One line per `\n` of the label, so long labels do not run into their neighbours.
        for (k, part) in group.label.split('\n').enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
                gx + slot / 2.0,
                plot_bottom + 16.0 + 14.0 * k as f64,
                esc(part)
            );
        }
    }
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{plot_bottom:.1}" x2="{:.1}" y2="{plot_bottom:.1}" stroke="#333"/>"##,
        WIDTH - RIGHT
    );
}

/// The chart for the servers of one group, in table order.
pub fn chart(summaries: &[&Summary], order: &[String], levels: &[u64], subtitle: &str) -> String {
    let color = |name: &str| {
        let i = order.iter().position(|n| n == name).unwrap_or(0);
        PALETTE[i % PALETTE.len()].to_string()
    };
    let mut panels = Vec::new();
    for revision in Revision::ALL {
        let present: Vec<&&Summary> = summaries
            .iter()
            .filter(|s| s.revision == Some(revision) && !s.throughput.is_empty())
            .collect();
        if present.is_empty() {
            continue;
        }
        let series: Vec<Series> = present
            .iter()
            .map(|s| Series {
                name: s.server.clone(),
                color: color(&s.server),
            })
            .collect();
        let groups = levels
            .iter()
            .map(|level| Group {
                label: format!("{level} in flight"),
                bars: present
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| s.throughput.get(level).map(|v| (i, *v)))
                    .collect(),
            })
            .collect();
        panels.push((
            format!(
                "Throughput, MCP {} (calls/s, log scale; higher is better)",
                revision.as_str()
            ),
            "calls/s".to_string(),
            series,
            groups,
        ));
    }
    let latency_series = vec![
        Series {
            name: "p50".into(),
            color: "#9ecae1".into(),
        },
        Series {
            name: "p99".into(),
            color: "#3182bd".into(),
        },
        Series {
            name: "max".into(),
            color: "#08519c".into(),
        },
    ];
    let latency_groups: Vec<Group> = summaries
        .iter()
        .filter(|s| s.p50_us.is_some())
        .map(|s| Group {
            label: format!(
                "{}\n{}",
                s.server,
                s.revision.map(|r| r.as_str()).unwrap_or_default()
            ),
            bars: [s.p50_us, s.p99_us, s.max_us]
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v)))
                .collect(),
        })
        .collect();
    if !latency_groups.is_empty() {
        panels.push((
            "Latency at 1 in flight (µs, log scale; lower is better)".to_string(),
            "µs".to_string(),
            latency_series,
            latency_groups,
        ));
    }
    let height = 40.0 + PANEL_HEIGHT * panels.len() as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="24" font-size="13" fill="#555">{}</text>"##,
        esc(subtitle)
    );
    for (i, (title, unit, series, groups)) in panels.iter().enumerate() {
        panel(
            &mut out,
            30.0 + PANEL_HEIGHT * i as f64,
            title,
            unit,
            series,
            groups,
        );
    }
    out.push_str("</svg>\n");
    out
}
