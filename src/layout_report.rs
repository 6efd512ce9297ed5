//! `komorebi layout`: the broadcasts of a rectangle for a harvest mask, direction and NoC.

use komorebi_broadcast::args::Along;
use komorebi_broadcast::layout::{self, Geometry, LayoutError};
use komorebi_hal::{LogicalRect, NocId};
use serde::Serialize;

/// One broadcast as `komorebi layout` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BroadcastReport {
    /// Cores in rank order (rank 0 sends), logical `[x, y]`.
    pub cores: Vec<[u8; 2]>,
    /// The same cores in NoC0 coordinates.
    pub noc0: Vec<[u8; 2]>,
    /// Multicast start in the chosen NoC's raw coordinates; `null` without receivers.
    pub start: Option<[u8; 2]>,
    /// Multicast end; `null` without receivers.
    pub end: Option<[u8; 2]>,
}

/// What `komorebi layout` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayoutReport {
    /// NoC0 x of each logical column.
    pub noc0_x: Vec<u8>,
    /// `[first_column, columns]` of each panel.
    pub panels: Vec<[u8; 2]>,
    /// The broadcasts.
    pub broadcasts: Vec<BroadcastReport>,
    #[serde(skip)]
    along: Along,
    #[serde(skip)]
    noc: NocId,
}

/// Lays out `rect` for a die-order `harvest_mask`.
pub fn layout_report(
    harvest_mask: u32,
    rect: LogicalRect,
    along: Along,
    noc: NocId,
) -> Result<LayoutReport, LayoutError> {
    let geometry = Geometry::blackhole(harvest_mask)?;
    let mut broadcasts = Vec::new();
    for b in layout::broadcasts(&geometry, rect, along, noc)? {
        let corners = layout::broadcast_rect(&geometry, &b, noc)?;
        broadcasts.push(BroadcastReport {
            cores: b.cores().iter().map(|&(x, y)| [x, y]).collect(),
            noc0: b
                .cores()
                .iter()
                .filter_map(|&c| geometry.noc0(c))
                .map(|(x, y)| [x, y])
                .collect(),
            start: corners.map(|(s, _)| [s.0, s.1]),
            end: corners.map(|(_, e)| [e.0, e.1]),
        });
    }
    Ok(LayoutReport {
        noc0_x: geometry.noc0_x().to_vec(),
        panels: layout::panels(geometry.noc0_x())
            .iter()
            .map(|p| [p.first_column, p.columns])
            .collect(),
        broadcasts,
        along,
        noc,
    })
}

fn pairs(v: &[[u8; 2]]) -> String {
    v.iter()
        .map(|[x, y]| format!("({x},{y})"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl std::fmt::Display for LayoutReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "noc0_x: {:?}", self.noc0_x)?;
        writeln!(f, "panels [first_column, columns]: {:?}", self.panels)?;
        write!(
            f,
            "{} broadcasts along {}s on NoC{} (rank 0 sends; start/end in NoC{} raw coordinates)",
            self.broadcasts.len(),
            self.along.name(),
            self.noc.index(),
            self.noc.index()
        )?;
        for (i, b) in self.broadcasts.iter().enumerate() {
            write!(
                f,
                "\n  #{i}: cores {}\n      noc0  {}",
                pairs(&b.cores),
                pairs(&b.noc0)
            )?;
            match (b.start, b.end) {
                (Some(s), Some(e)) => write!(
                    f,
                    "\n      multicast start ({},{}) end ({},{})",
                    s[0], s[1], e[0], e[1]
                )?,
                _ => write!(f, "\n      no receivers")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_has_the_documented_shape() {
        let r = layout_report(
            0x3000,
            LogicalRect::new(5, 0, 2, 1),
            Along::Row,
            NocId::Noc0,
        )
        .unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "noc0_x": [1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16],
                "panels": [[0, 6], [6, 6]],
                "broadcasts": [
                    {"cores": [[5, 0]], "noc0": [[6, 2]], "start": null, "end": null},
                    {"cores": [[6, 0]], "noc0": [[11, 2]], "start": null, "end": null}
                ]
            })
        );
        let r = layout_report(
            0x3000,
            LogicalRect::new(0, 0, 1, 3),
            Along::Column,
            NocId::Noc1,
        )
        .unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["broadcasts"][0],
            serde_json::json!({
                "cores": [[0, 2], [0, 1], [0, 0]],
                "noc0": [[1, 4], [1, 3], [1, 2]],
                "start": [15, 8],
                "end": [15, 9]
            })
        );
    }
}
