//! Charts drawn with `plotters`: horizontal bar charts in the manner of the
//! LevelDB report (a heading per workload, one bar per engine scaled to the
//! workload's fastest, min–max whiskers) and line charts of ops/s over time or per iteration. Each chart
//! is drawn twice from the same code: as SVG text and as a PNG file.
//!
//! Fonts: plotters' `ab_glyph` backend draws text from a TrueType/OpenType
//! file registered at start-up ([`init_font`]): `--font=<path>`, the
//! `SHALE_REPORT_FONT` variable, `fc-match sans-serif`, or the usual system
//! font directories. Without a font nothing can be labelled, so the report
//! refuses to start rather than produce unreadable charts.
//!
//! Invariants: charts tolerate missing values (drawn as `n/a` rows) and empty
//! series (an explanatory text instead of axes); scales never divide by zero.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use crate::stats::Summary;

static FONT: OnceLock<PathBuf> = OnceLock::new();

/// Font family name the charts ask for.
const FAMILY: &str = "sans-serif";

/// Preferred fonts, tried in order under the font directories.
const PREFERRED: [&str; 6] = [
    "DejaVuSans.ttf",
    "LiberationSans-Regular.ttf",
    "NotoSans-Regular.ttf",
    "FreeSans.ttf",
    "Arial.ttf",
    "Vera.ttf",
];

const FONT_DIRS: [&str; 3] = [
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/usr/X11R6/lib/X11/fonts",
];

fn find_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth == 0 {
        return;
    }
    let Ok(rd) = fs::read_dir(dir) else { return };
    for entry in rd.flatten() {
        let p = entry.path();
        if p.is_dir() {
            find_files(&p, depth - 1, out);
        } else if matches!(
            p.extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("ttf" | "otf")
        ) {
            out.push(p);
        }
    }
}

/// Candidate font files, best first.
pub fn font_candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(p) = explicit {
        c.push(p.to_path_buf());
        return c;
    }
    if let Some(p) = std::env::var_os("SHALE_REPORT_FONT") {
        c.push(PathBuf::from(p));
    }
    if let Ok(out) = Command::new("fc-match")
        .args(["-f", "%{file}", "sans-serif:style=Regular"])
        .output()
    {
        let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !p.is_empty() {
            c.push(PathBuf::from(p));
        }
    }
    let mut all = Vec::new();
    for d in FONT_DIRS {
        find_files(Path::new(d), 6, &mut all);
    }
    all.sort();
    for name in PREFERRED {
        c.extend(
            all.iter()
                .filter(|p| p.file_name().is_some_and(|f| f == name))
                .cloned(),
        );
    }
    c.extend(
        all.iter()
            .filter(|p| {
                let n = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
                n.contains("Sans")
                    && !n.contains("Mono")
                    && !n.contains("Bold")
                    && !n.contains("Oblique")
                    && !n.contains("Italic")
            })
            .cloned(),
    );
    c.extend(all);
    c
}

/// Registers the chart font once; returns the file used. Later calls return
/// the first registration.
pub fn init_font(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = FONT.get() {
        return Ok(p.clone());
    }
    let candidates = font_candidates(explicit);
    let mut tried = Vec::new();
    for path in candidates {
        let Ok(bytes) = fs::read(&path) else {
            tried.push(format!("{} (unreadable)", path.display()));
            continue;
        };
        // The font table needs 'static data; one font is leaked for the
        // life of the process (a few hundred KB, loaded once).
        let data: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        if plotters::style::register_font(FAMILY, FontStyle::Normal, data).is_ok() {
            let _ = FONT.set(path.clone());
            return Ok(FONT.get().cloned().unwrap_or(path));
        }
        tried.push(format!(
            "{} (not a usable TrueType/OpenType font)",
            path.display()
        ));
    }
    Err(format!(
        "no font for the chart labels: pass --font=<file.ttf> or set SHALE_REPORT_FONT \
         (Debian: apt-get install fonts-dejavu-core){}",
        if tried.is_empty() {
            String::new()
        } else {
            format!("; tried {}", tried.join(", "))
        }
    ))
}

/// One bar: an engine's figure on a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Engine name (row label).
    pub label: String,
    /// Colour.
    pub color: (u8, u8, u8),
    /// The figure, or the `n/a` text drawn instead.
    pub value: Result<Summary, String>,
}

/// A workload heading and its bars.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    /// Workload label.
    pub label: String,
    /// Bars, one per engine.
    pub bars: Vec<Bar>,
}

/// A line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend label.
    pub label: String,
    /// Colour.
    pub color: (u8, u8, u8),
    /// Points (x, ops/s).
    pub points: Vec<(f64, f64)>,
}

type DrawResult = Result<(), String>;

fn e2s<E: std::fmt::Debug>(e: E) -> String {
    format!("chart drawing failed: {e:?}")
}

/// "1.2M"-style axis label (trailing ".0" dropped).
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (x, unit, decimals) = if a >= 1e9 {
        (v / 1e9, "G", 1)
    } else if a >= 1e6 {
        (v / 1e6, "M", 1)
    } else if a >= 1e4 {
        (v / 1e3, "k", 0)
    } else if a >= 1e3 {
        (v / 1e3, "k", 1)
    } else if a >= 10.0 || a == 0.0 {
        (v, "", 0)
    } else {
        (v, "", 1)
    };
    let mut s = format!("{x:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    s + unit
}

/// An x-axis tick label with as many decimals as an axis reaching `x_max`
/// needs to tell its ticks apart (seconds of a short run, iteration numbers).
pub fn x_tick(v: f64, x_max: f64) -> String {
    if x_max >= 20.0 {
        si(v)
    } else {
        let decimals = if x_max >= 2.0 { 1 } else { 2 };
        let s = format!("{v:.decimals$}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

const BAR_ROW: i32 = 22;
const HEAD_ROW: i32 = 24;
const BAR_WIDTH: u32 = 960;

/// Pixel size of a bar chart.
pub fn bar_chart_size(groups: &[BarGroup]) -> (u32, u32) {
    let rows: i32 = groups
        .iter()
        .map(|g| HEAD_ROW + BAR_ROW * g.bars.len() as i32)
        .sum();
    (BAR_WIDTH, (70 + rows + 50).max(160) as u32)
}

fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[BarGroup],
) -> DrawResult {
    root.fill(&WHITE).map_err(e2s)?;
    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let left = 250;
    let right = w - 190;
    let top = 56;
    let bottom = h - 44;
    let title_style = TextStyle::from((FAMILY, 20).into_font()).color(&BLACK);
    root.draw(&Text::new(title.to_string(), (12, 14), title_style))
        .map_err(e2s)?;

    // Each workload is scaled to its own fastest engine, as on the LevelDB
    // benchmark page: reads run at millions of ops/s and synchronous writes
    // at hundreds, and one shared axis would flatten every write bar.
    let small = TextStyle::from((FAMILY, 12).into_font()).color(&RGBColor(80, 80, 80));
    root.draw(&Text::new(
        "operations per second; each workload scaled to its fastest engine \
         (bar: median or trimmed mean; whisker: min–max)"
            .to_string(),
        ((left + right) / 2, bottom + 12),
        small.pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(e2s)?;

    let head = TextStyle::from((FAMILY, 14).into_font()).color(&BLACK);
    let label = TextStyle::from((FAMILY, 13).into_font()).color(&BLACK);
    let mut y = top;
    for g in groups {
        root.draw(&Text::new(
            g.label.clone(),
            (12, y + HEAD_ROW / 2),
            head.pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e2s)?;
        y += HEAD_ROW;
        let x_of = group_scale(g, left, right);
        for b in &g.bars {
            let mid = y + BAR_ROW / 2;
            root.draw(&Text::new(
                b.label.clone(),
                (left - 8, mid),
                label.pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(e2s)?;
            match &b.value {
                Ok(s) => {
                    let x1 = x_of(s.center).max(left + 1);
                    root.draw(&Rectangle::new(
                        [(left, y + 3), (x1, y + BAR_ROW - 3)],
                        rgb(b.color).filled(),
                    ))
                    .map_err(e2s)?;
                    if s.max > s.min {
                        let (a, z) = (x_of(s.min), x_of(s.max));
                        let dark = RGBColor(30, 30, 30);
                        root.draw(&PathElement::new(vec![(a, mid), (z, mid)], dark))
                            .map_err(e2s)?;
                        for x in [a, z] {
                            root.draw(&PathElement::new(vec![(x, mid - 5), (x, mid + 5)], dark))
                                .map_err(e2s)?;
                        }
                    }
                    root.draw(&Text::new(
                        crate::markdown::fmt_ops(s.center),
                        (x_of(s.max.max(s.center)) + 6, mid),
                        label.pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(e2s)?;
                }
                Err(why) => {
                    let mut text = format!("n/a: {why}");
                    if text.chars().count() > 90 {
                        text = text.chars().take(87).collect::<String>() + "...";
                    }
                    root.draw(&Text::new(
                        text,
                        (left + 6, mid),
                        small.pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(e2s)?;
                }
            }
            y += BAR_ROW;
        }
    }
    root.draw(&PathElement::new(
        vec![(left, top - 4), (left, bottom)],
        BLACK,
    ))
    .map_err(e2s)?;
    Ok(())
}

/// The x position of a value in group `g`, whose largest figure (a
/// whisker's end included) spans the plot from `left` to `right`.
fn group_scale(g: &BarGroup, left: i32, right: i32) -> impl Fn(f64) -> i32 {
    let max = g
        .bars
        .iter()
        .filter_map(|b| b.value.as_ref().ok())
        .map(|s| s.max.max(s.center))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let scale = if max > 0.0 { max } else { 1.0 };
    move |v: f64| left + ((v / scale).clamp(0.0, 1.0) * f64::from(right - left)) as i32
}

/// Pixel size of a line chart.
pub const LINE_SIZE: (u32, u32) = (960, 520);

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    lines: &[Line],
) -> DrawResult {
    root.fill(&WHITE).map_err(e2s)?;
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter())
        .map(|p| p.0)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter())
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let x_max = if x_max > 0.0 { x_max } else { 1.0 };
    // Head-room above the highest point keeps the legend off the lines.
    let y_max = if y_max > 0.0 { y_max * 1.35 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(e2s)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("ops/s")
        .y_label_formatter(&|v| si(*v))
        .x_label_formatter(&|v| x_tick(*v, x_max))
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 13))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e2s)?;
    if lines.iter().all(|l| l.points.is_empty()) {
        root.draw(&Text::new(
            "no samples: no engine produced data for this chart".to_string(),
            (LINE_SIZE.0 as i32 / 2, LINE_SIZE.1 as i32 / 2),
            TextStyle::from((FAMILY, 16).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(e2s)?;
        return Ok(());
    }
    for l in lines.iter().filter(|l| !l.points.is_empty()) {
        let color = rgb(l.color);
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(e2s)?
            .label(l.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        // Few samples: mark them, so that a single point is visible too.
        if l.points.len() <= 60 {
            chart
                .draw_series(l.points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(e2s)?;
        }
    }
    chart
        .configure_series_labels()
        .label_font((FAMILY, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(150, 150, 150))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e2s)?;
    Ok(())
}

/// A chart drawn both ways.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The SVG document.
    pub svg: String,
    /// Where the PNG was written.
    pub png: PathBuf,
}

/// Draws a bar chart as SVG and writes it as PNG to `png`.
pub fn bar_chart(title: &str, groups: &[BarGroup], png: &Path) -> Result<Rendered, String> {
    let size = bar_chart_size(groups);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw_bars(&root, title, groups)?;
        root.present().map_err(e2s)?;
    }
    {
        let root = BitMapBackend::new(png, size).into_drawing_area();
        draw_bars(&root, title, groups)?;
        root.present().map_err(e2s)?;
    }
    Ok(Rendered {
        svg,
        png: png.to_path_buf(),
    })
}

/// Draws a line chart as SVG and writes it as PNG to `png`.
pub fn line_chart(
    title: &str,
    x_label: &str,
    lines: &[Line],
    png: &Path,
) -> Result<Rendered, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, LINE_SIZE).into_drawing_area();
        draw_lines(&root, title, x_label, lines)?;
        root.present().map_err(e2s)?;
    }
    {
        let root = BitMapBackend::new(png, LINE_SIZE).into_drawing_area();
        draw_lines(&root, title, x_label, lines)?;
        root.present().map_err(e2s)?;
    }
    Ok(Rendered {
        svg,
        png: png.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels() {
        assert_eq!(si(1_500_000.0), "1.5M");
        assert_eq!(si(1_000_000.0), "1M");
        assert_eq!(si(129_000.0), "129k");
        assert_eq!(si(1_200.0), "1.2k");
        assert_eq!(si(1_000.0), "1k");
        assert_eq!(si(88.0), "88");
        assert_eq!(si(7.25), "7.2");
        assert_eq!(si(0.0), "0");
        assert_eq!(x_tick(0.05, 0.49), "0.05");
        assert_eq!(x_tick(0.1, 0.49), "0.1");
        assert_eq!(x_tick(2.5, 19.0), "2.5");
        assert_eq!(x_tick(4.0, 19.0), "4");
        assert_eq!(x_tick(150.0, 300.0), "150");
    }
}
