//! Charts as SVG drawn on the server: no script, no library, readable by a screen reader
//! through their title and description (the numbers are also in the table beside them).

use maud::{Markup, html};

/// A bar chart of `points` (label, value); `id` names its title and description.
pub fn bars(id: &str, title: &str, points: &[(String, f64)]) -> Markup {
    const W: f64 = 640.0;
    const H: f64 = 180.0;
    const PAD: f64 = 24.0;
    let max = points
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let n = points.len().max(1) as f64;
    let slot = (W - 2.0 * PAD) / n;
    let bar = (slot * 0.7).max(1.0);
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let total: f64 = points.iter().map(|(_, v)| v).sum();
    let first = points.first().map(|(l, _)| l.as_str()).unwrap_or_default();
    let last = points.last().map(|(l, _)| l.as_str()).unwrap_or_default();
    html! {
        svg.chart viewBox={ "0 0 " (W) " " (H) } role="img"
            aria-labelledby={ (title_id) " " (desc_id) } xmlns="http://www.w3.org/2000/svg" {
            title id=(title_id) { (title) }
            desc id=(desc_id) {
                (points.len()) " values from " (first) " to " (last) "; highest "
                (max) ", total " (total) "."
            }
            line x1=(PAD) y1=(H - PAD) x2=(W - PAD) y2=(H - PAD) stroke="#7b8794" {}
            @for (i, (label, value)) in points.iter().enumerate() {
                @let h = (value / max) * (H - 2.0 * PAD);
                @let x = PAD + i as f64 * slot + (slot - bar) / 2.0;
                rect x=(format!("{x:.1}")) y=(format!("{:.1}", H - PAD - h))
                    width=(format!("{bar:.1}")) height=(format!("{h:.1}")) fill="#0b5cad" {
                    title { (label) ": " (value) }
                }
            }
            text x=(PAD) y=(H - 6.0) font-size="11" fill="#4f5b6b" { (first) }
            text x=(W - PAD) y=(H - 6.0) font-size="11" fill="#4f5b6b" text-anchor="end" { (last) }
            text x=(PAD) y=(14.0) font-size="11" fill="#4f5b6b" { "max " (max) }
        }
    }
}
