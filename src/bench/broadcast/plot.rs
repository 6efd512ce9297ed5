//! The SVG line chart of `--plot`: axes with ticks, a polyline and markers per series, a legend,
//! a title, every text escaped.
//!
//! Written by hand rather than with a plotting crate, a choice re-examined on 2026-12-04:
//! plotters 0.3 with only its `svg_backend` and `line_series` features does build without
//! fonts, but adds plotters, plotters-backend, plotters-svg and num-traits (and wasm-bindgen's
//! tree to the lock file) for one small line chart, a few dozen lines of SVG; and the chart's
//! tests look for its own classes on the ticks (`x-tick`, `y-tick`), which this module writes
//! and a plotting crate would not.

use std::fmt::Write as _;

/// Width of the picture, in SVG user units (pixels).
pub const WIDTH: f64 = 840.0;
/// Least height of the picture; it grows with the legend's lines ([`Chart::height`]).
pub const MIN_HEIGHT: f64 = 460.0;
/// Left edge of the plot area (room for the y axis' labels).
const LEFT: f64 = 70.0;
/// Right edge of the plot area (the legend is to its right).
const RIGHT: f64 = WIDTH - 280.0;
/// Top edge of the plot area (the title above it).
const TOP: f64 = 70.0;
/// Room under the plot area for the x axis' ticks and label.
const UNDER: f64 = 60.0;
/// Height of one line of the legend.
const LEGEND_LINE: f64 = 22.0;
/// The most y ticks a chart draws past 0.
pub const MAX_Y_TICKS: u32 = 50;
/// Dash patterns of the series' styles (none: solid).
const DASHES: [Option<&str>; 4] = [None, Some("7 4"), Some("2 3"), Some("9 3 2 3")];

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The name the legend gives it.
    pub name: String,
    /// Its colour, an SVG colour (`#1f77b4`).
    pub colour: &'static str,
    /// Its style: the dash pattern and marker, four of each; styles 0 to 15 are sixteen
    /// different pairs (so a fifth pages value is not drawn as the first), then they repeat.
    pub style: usize,
    /// Its points `(x, y)` in data units, drawn in order; not finite ones are left out. A
    /// series with no point is named in the legend and draws nothing.
    pub points: Vec<(f64, f64)>,
}

/// A line chart: y from 0 to 1 (or past 1 to the largest point, in steps of 0.2), x over the
/// ticks and points.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title, above the plot.
    pub title: String,
    /// A line under the title.
    pub subtitle: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// Ticks of the x axis: position in data units and label.
    pub x_ticks: Vec<(f64, String)>,
    /// The lines.
    pub series: Vec<Series>,
}

/// `text` with the five characters XML gives a meaning escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

impl Series {
    /// The points that are drawn: the finite ones.
    fn drawn(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    /// The `stroke-dasharray` attribute of its style, or nothing for a solid line.
    pub(super) fn dash(&self) -> String {
        // Marker `style % 4`; the dash moves on by one every four styles.
        DASHES[(self.style + self.style / 4) % DASHES.len()]
            .map(|d| format!(r#" stroke-dasharray="{d}""#))
            .unwrap_or_default()
    }

    /// Its marker at `(x, y)` in picture units: a circle, square, triangle or diamond.
    pub(super) fn marker(&self, x: f64, y: f64) -> String {
        let c = self.colour;
        match self.style % 4 {
            0 => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{c}"/>"#),
            1 => format!(
                r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{c}"/>"#,
                x - 4.0,
                y - 4.0
            ),
            2 => format!(
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{c}"/>"#,
                x,
                y - 5.0,
                x + 5.0,
                y + 4.0,
                x - 5.0,
                y + 4.0
            ),
            _ => format!(
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{c}"/>"#,
                x,
                y - 5.0,
                x + 5.0,
                y,
                x,
                y + 5.0,
                x - 5.0,
                y
            ),
        }
    }
}

impl Chart {
    /// The x range drawn: the ticks and the points, with a margin; one unit around a single
    /// position, 0..1 with none.
    fn x_range(&self) -> (f64, f64) {
        let xs = self
            .x_ticks
            .iter()
            .map(|t| t.0)
            .chain(self.series.iter().flat_map(|s| s.drawn().map(|p| p.0)))
            .filter(|x| x.is_finite());
        let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        if lo > hi {
            (0.0, 1.0)
        } else if lo == hi {
            (lo - 1.0, hi + 1.0)
        } else {
            let pad = (hi - lo) * 0.08;
            (lo - pad, hi + pad)
        }
    }

    /// The step of the y ticks, in fifths: 1 (0.2), or the multiple of it that keeps them at
    /// most [`MAX_Y_TICKS`] (an efficiency far past 1, from a card whose clock reads wrong, would
    /// draw millions of lines).
    fn y_step_fifths(&self) -> f64 {
        let top = self
            .series
            .iter()
            .flat_map(|s| s.drawn().map(|p| p.1))
            .fold(1.0_f64, f64::max);
        ((top * 5.0 - 1e-9).ceil() / f64::from(MAX_Y_TICKS))
            .ceil()
            .max(1.0)
    }

    /// The top of the y axis: 1, or the largest point rounded up to a tick (steps of 0.2, or
    /// of a multiple of 0.2 past [`MAX_Y_TICKS`] of them).
    pub fn y_max(&self) -> f64 {
        let top = self
            .series
            .iter()
            .flat_map(|s| s.drawn().map(|p| p.1))
            .fold(1.0_f64, f64::max);
        let step = self.y_step_fifths();
        ((top * 5.0 - 1e-9) / step).ceil().max(5.0 / step).ceil() * step / 5.0
    }

    /// The y axis' ticks: 0 to [`Self::y_max`], every 0.2, or every multiple of 0.2 that keeps
    /// them at most [`MAX_Y_TICKS`].
    pub fn y_ticks(&self) -> Vec<f64> {
        let step = self.y_step_fifths();
        let ticks = (self.y_max() * 5.0 / step).round() as u64;
        (0..=ticks).map(|i| i as f64 * step / 5.0).collect()
    }

    /// The picture's height: [`MIN_HEIGHT`], or more when the legend needs it.
    pub fn height(&self) -> f64 {
        MIN_HEIGHT.max(TOP + LEGEND_LINE * self.series.len() as f64 + UNDER)
    }

    /// The chart as an SVG document (it starts with `<svg`).
    pub fn to_svg(&self) -> String {
        let height = self.height();
        let bottom = height - UNDER;
        let (x0, x1) = self.x_range();
        let y_max = self.y_max();
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (RIGHT - LEFT);
        let py = |y: f64| bottom - y / y_max * (bottom - TOP);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, "<title>{}</title>", escape(&self.title));
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            WIDTH / 2.0,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="44" text-anchor="middle" fill="#555">{}</text>"##,
            WIDTH / 2.0,
            escape(&self.subtitle)
        );
        for y in self.y_ticks() {
            let v = py(y);
            let _ = writeln!(
                s,
                r##"<line class="grid" x1="{LEFT}" y1="{v:.1}" x2="{RIGHT}" y2="{v:.1}" stroke="#e3e3e3"/>"##
            );
            let _ = writeln!(
                s,
                r#"<text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end">{y:.1}</text>"#,
                LEFT - 8.0,
                v + 4.0
            );
        }
        for (x, label) in &self.x_ticks {
            let h = px(*x);
            let _ = writeln!(
                s,
                r#"<line x1="{h:.1}" y1="{bottom}" x2="{h:.1}" y2="{:.1}" stroke="black"/>"#,
                bottom + 5.0
            );
            let _ = writeln!(
                s,
                r#"<text class="x-tick" x="{h:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 19.0,
                escape(label)
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="M{LEFT},{TOP} V{bottom} H{RIGHT}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (LEFT + RIGHT) / 2.0,
            bottom + 42.0,
            escape(&self.x_label)
        );
        let mid = (TOP + bottom) / 2.0;
        let _ = writeln!(
            s,
            r#"<text x="20" y="{mid:.1}" text-anchor="middle" transform="rotate(-90 20 {mid:.1})">{}</text>"#,
            escape(&self.y_label)
        );
        for series in &self.series {
            let points: Vec<(f64, f64)> = series.drawn().map(|(x, y)| (px(x), py(y))).collect();
            if points.is_empty() {
                continue;
            }
            let path: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}><title>{}</title></polyline>"#,
                path.join(" "),
                series.colour,
                series.dash(),
                escape(&series.name)
            );
            for (x, y) in points {
                let _ = writeln!(s, "{}", series.marker(x, y));
            }
        }
        for (i, series) in self.series.iter().enumerate() {
            let y = TOP + 8.0 + LEGEND_LINE * i as f64;
            let (a, b) = (RIGHT + 20.0, RIGHT + 56.0);
            let _ = writeln!(
                s,
                r#"<line x1="{a:.1}" y1="{y:.1}" x2="{b:.1}" y2="{y:.1}" stroke="{}" stroke-width="2"{}/>"#,
                series.colour,
                series.dash()
            );
            let _ = writeln!(s, "{}", series.marker((a + b) / 2.0, y));
            let none = if series.drawn().next().is_none() {
                " (no data)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r#"<text class="legend" x="{:.1}" y="{:.1}">{}{none}</text>"#,
                b + 8.0,
                y + 4.0,
                escape(&series.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}
