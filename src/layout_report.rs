//! `komorebi layout`: the broadcasts of a rectangle for a harvest mask, direction and NoC, and
//! where each sender reads its pages in DRAM (the 03 program's placement,
//! `app::broadcast::placement`), on the working DRAM banks of a chip whose fused DRAM bank is
//! given (never that bank).

use crate::app::broadcast::{BroadcastConfig, BroadcastPlan, DeviceChoice};
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::args::Along;
use komorebi_broadcast::layout::{self, LayoutError};
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
    /// The DRAM bank of each of the sender's eight page streams (page `g` in stream `g % 8`),
    /// as the 03 program places them (`placement` of [`LayoutReport`]); `null` when the
    /// broadcast is not one the 03 program runs (rows on NoC0, columns on NoC1).
    pub banks: Option<[u8; 8]>,
    /// The layer of the bank address space the sender's own copy of the pages lies in
    /// (`dram_layers` of [`LayoutReport`]); `null` with `banks`.
    pub layer: Option<u32>,
    /// How many pages into its layer the copy starts (0 to 7: copies of one layer keep their
    /// pages apart so); `null` with `banks`.
    pub shift: Option<u8>,
}

/// The shape the DRAM placement of `komorebi layout` is computed for: the 03 program on the
/// rectangle with both its broadcasts (A along rows on NoC0, W along columns on NoC1), which
/// share the banks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PlacementShape {
    /// Jobs: the senders' DRAM holds every job's blocks.
    pub jobs: u32,
    /// Window: buffer slots of each core (window x pages at most 65,535 pages).
    pub window: u8,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Pages per block.
    pub pages: u16,
    /// Bytes per page.
    pub page_size: u32,
}

/// What `komorebi layout` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayoutReport {
    /// The chip: `blackhole` or `wormhole`.
    pub chip: &'static str,
    /// Which way the broadcasts run: `row` or `column`.
    #[serde(rename = "along")]
    pub along_name: &'static str,
    /// The NoC they multicast on, 0 or 1, whose raw coordinates `start` and `end` are.
    #[serde(rename = "noc")]
    pub noc_index: u8,
    /// The fused DRAM bank the placement leaves out (left out of the JSON when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
    /// NoC0 x of each logical column.
    pub noc0_x: Vec<u8>,
    /// `[first_column, columns]` of each panel.
    pub panels: Vec<[u8; 2]>,
    /// The broadcasts.
    pub broadcasts: Vec<BroadcastReport>,
    /// The shape the senders' DRAM banks (`banks`) are placed for; `null` when the 03 program
    /// refuses the rectangle or the shape (`placement_refused` says why).
    pub placement: Option<PlacementShape>,
    /// How many layers deep the senders' copies lie in each bank (senders whose streams never
    /// read one bank at the same stream number share a layer, each layer one copy's span);
    /// `null` without a placement.
    pub dram_layers: Option<u32>,
    /// Bytes of each DRAM bank's address space the jobs' data takes: the layers of every job
    /// in the ring of at most four; `null` without a placement.
    pub dram_bytes_per_bank: Option<u64>,
    /// Why there is no placement, when the 03 program refuses the rectangle or the shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_refused: Option<String>,
    #[serde(skip)]
    along: Along,
    #[serde(skip)]
    noc: NocId,
}

/// Lays out `rect` on chip `chip` for its harvest word `harvest_mask` (as
/// [`crate::chip::geometry`] takes it: die-order Tensix columns on Blackhole, tt-umd's row mask
/// on Wormhole), with the senders' DRAM banks placed for the 03 program of `shape` on the
/// rectangle, on a chip whose DRAM bank `fused_dram` (0..=7) is fused off, or none.
pub fn layout_report(
    chip: crate::chip::ChipKind,
    harvest_mask: u32,
    fused_dram: Option<u8>,
    rect: LogicalRect,
    along: Along,
    noc: NocId,
    shape: PlacementShape,
) -> Result<LayoutReport, LayoutError> {
    let geometry = crate::chip::geometry(chip, harvest_mask, fused_dram)?;
    // The 03 program's placement, for the broadcast it runs this way (rows on NoC0, columns on
    // NoC1); a shape it refuses places nothing.
    let id = match (along, noc) {
        (Along::Row, NocId::Noc0) => Some(0),
        (Along::Column, NocId::Noc1) => Some(1),
        _ => None,
    };
    // The placement is the program's on this geometry: the plan's own checks take the flags'
    // chip (a Wormhole's run needs ttsim, whatever the layout shows). No broadcast of the
    // program runs this way: no plan is made.
    let harvest = id
        .ok_or_else(|| "the 03 program runs rows on NoC0 and columns on NoC1".to_string())
        .and_then(|_| match chip {
            crate::chip::ChipKind::Blackhole => {
                HarvestMask::new(harvest_mask).map_err(|e| e.to_string())
            }
            crate::chip::ChipKind::Wormhole => Ok(HarvestMask::P100_P150),
        });
    let plan = harvest.and_then(|harvest| {
        let cfg = BroadcastConfig {
            rect,
            jobs: shape.jobs,
            window: shape.window,
            blocks: shape.blocks,
            pages: shape.pages,
            page_size: shape.page_size,
            harvest,
            fused_dram,
            chip,
            device: match chip {
                crate::chip::ChipKind::Blackhole => DeviceChoice::Sim,
                crate::chip::ChipKind::Wormhole => DeviceChoice::Ttsim {
                    library: std::path::PathBuf::new(),
                    chip: 0,
                },
            },
            exec: match chip {
                crate::chip::ChipKind::Blackhole => crate::host::backend::Exec::Native,
                crate::chip::ChipKind::Wormhole => crate::host::backend::Exec::Firmware,
            },
            ..BroadcastConfig::default()
        };
        BroadcastPlan::per_job(&cfg, &geometry).map_err(|e| {
            // The placement is the program's with both broadcasts (`--along` here picks
            // which to print): a hint of the run's `--along` must not read as this flag's.
            let both = match e.to_string().contains("with --along row or column") {
                true => " (layout places both broadcasts, as `broadcast --along both` runs)",
                false => "",
            };
            format!("the 03 program refuses this shape: {e}{both}")
        })
    });
    let (plan, placement_refused) = match plan {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    let placed = match (&plan, id) {
        (Some(p), Some(id)) => p.sender_banks(id),
        _ => Vec::new(),
    };
    let mut broadcasts = Vec::new();
    for b in layout::broadcasts(&geometry, rect, along, noc)? {
        let corners = layout::broadcast_rect(&geometry, &b, noc)?;
        let copy = b.cores().first().and_then(|&(x, y)| {
            placed
                .iter()
                .find(|(c, _, _)| (c.x, c.y) == (x, y))
                .map(|&(_, banks, place)| (banks, place))
        });
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
            banks: copy.map(|c| c.0),
            layer: copy.map(|c| c.1.0),
            shift: copy.map(|c| c.1.1),
        });
    }
    Ok(LayoutReport {
        chip: crate::chip::chip_flag(chip),
        along_name: along.name(),
        noc_index: noc as u8,
        fused_dram: geometry.fused_dram(),
        noc0_x: geometry.noc0_x().to_vec(),
        panels: layout::panels(geometry.noc0_x())
            .iter()
            .map(|p| [p.first_column, p.columns])
            .collect(),
        broadcasts,
        dram_layers: plan.as_ref().map(|p| p.dram_layers()),
        dram_bytes_per_bank: plan
            .as_ref()
            .map(|p| p.dram_end() - crate::app::broadcast::DRAM_BASE),
        placement: plan.map(|_| shape),
        placement_refused,
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
            "{} along {}s on NoC{} (rank 0 sends; start/end in NoC{} raw coordinates)",
            crate::num::count(self.broadcasts.len() as u64, "broadcast", "broadcasts"),
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
            if let Some(banks) = b.banks {
                let banks: Vec<String> = banks.iter().map(u8::to_string).collect();
                write!(
                    f,
                    "\n      DRAM banks of page streams 0..7: {}",
                    banks.join(" ")
                )?;
                if let (Some(layer), Some(shift)) = (b.layer, b.shift) {
                    write!(f, " (its copy in layer {layer}, {shift} pages in)")?;
                }
            }
        }
        if let Some(why) = &self.placement_refused {
            return write!(f, "\nno DRAM placement: {why}");
        }
        match self.placement {
            Some(p) if self.broadcasts.iter().any(|b| b.banks.is_some()) => {
                write!(
                    f,
                    "\nDRAM banks as the 03 program places them for {} job{} of {} blocks of {} pages of {} \
                     bytes at window {} with both its broadcasts of this rectangle (page g of a sender is \
                     in stream g % 8; each sender reads its own copy, the copies {} deep: {} bytes \
                     of each bank)",
                    p.jobs,
                    if p.jobs == 1 { "" } else { "s" },
                    p.blocks,
                    p.pages,
                    p.page_size,
                    p.window,
                    crate::num::count(u64::from(self.dram_layers.unwrap_or(0)), "layer", "layers"),
                    self.dram_bytes_per_bank.unwrap_or(0)
                )?;
                if let Some(b) = self.fused_dram {
                    write!(f, "; DRAM bank {b} is fused off: no stream reads it")?;
                }
            }
            _ => write!(
                f,
                "\nno DRAM placement: no sender of this layout reads DRAM"
            )?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout of a Blackhole with its default harvest mask (0x3000).
    fn on_blackhole(
        fused_dram: Option<u8>,
        rect: LogicalRect,
        along: Along,
        noc: NocId,
        shape: PlacementShape,
    ) -> Result<LayoutReport, LayoutError> {
        layout_report(
            crate::chip::ChipKind::Blackhole,
            0x3000,
            fused_dram,
            rect,
            along,
            noc,
            shape,
        )
    }

    const SHAPE: PlacementShape = PlacementShape {
        jobs: 8,
        window: 2,
        blocks: 16,
        pages: 4,
        page_size: 2048,
    };

    #[test]
    fn the_json_has_the_documented_shape() {
        let r = on_blackhole(
            None,
            LogicalRect::new(5, 0, 2, 1),
            Along::Row,
            NocId::Noc0,
            SHAPE,
        )
        .unwrap();
        let json = serde_json::to_value(&r).unwrap();
        // Two one-core A broadcasts (one per panel). The placement's choice for them, with the
        // rectangle's two one-core W broadcasts reading too (pinned: the placement is
        // deterministic; `placement`'s tests say why it chooses what it does).
        assert_eq!(
            json,
            serde_json::json!({
                "chip": "blackhole",
                "along": "row",
                "noc": 0,
                "noc0_x": [1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16],
                "panels": [[0, 6], [6, 6]],
                "broadcasts": [
                    {"cores": [[5, 0]], "noc0": [[6, 2]], "start": null, "end": null,
                     "banks": [1, 0, 1, 0, 3, 0, 3, 0], "layer": 0, "shift": 0},
                    {"cores": [[6, 0]], "noc0": [[11, 2]], "start": null, "end": null,
                     "banks": [4, 7, 4, 1, 4, 7, 1, 4], "layer": 0, "shift": 0}
                ],
                "placement": {"jobs": 8, "window": 2, "blocks": 16, "pages": 4, "page_size": 2048},
                // Both A senders share layer 0 (their streams never meet in a bank), and so do
                // the two W senders, shifted (the furthest 2 pages) so that their pages keep
                // off the others': one layer of 128 KiB and 2 pages, in each of the ring's four
                // regions.
                "dram_layers": 1,
                "dram_bytes_per_bank": 4 * (16 * 4 * 2048 + 2 * 2048)
            })
        );
        let r = on_blackhole(
            None,
            LogicalRect::new(0, 0, 1, 3),
            Along::Column,
            NocId::Noc1,
            SHAPE,
        )
        .unwrap();
        let json = serde_json::to_value(&r).unwrap();
        // The W sender at NoC0 (1,4): mostly bank 6 (x 9: a short way into its row on NoC1);
        // two streams from bank 7, beside it, keep bank 6 from being the busiest resource.
        assert_eq!(
            json["broadcasts"][0],
            serde_json::json!({
                "cores": [[0, 2], [0, 1], [0, 0]],
                "noc0": [[1, 4], [1, 3], [1, 2]],
                "start": [15, 8],
                "end": [15, 9],
                "banks": [6, 6, 7, 6, 6, 7, 6, 6],
                "layer": 0,
                "shift": 0
            })
        );
        // The three one-core A senders and the W sender never read one stream number from one
        // bank: all four copies share one layer.
        assert_eq!(json["dram_layers"], 1);
    }

    #[test]
    fn a_fused_bank_is_never_placed_and_is_named() {
        for bank in 0..8u8 {
            let r = on_blackhole(
                Some(bank),
                LogicalRect::new(0, 0, 12, 10),
                Along::Column,
                NocId::Noc1,
                SHAPE,
            )
            .unwrap();
            assert_eq!(r.fused_dram, Some(bank));
            assert_eq!(r.broadcasts.len(), 12);
            for b in &r.broadcasts {
                let banks = b.banks.unwrap();
                assert!(!banks.contains(&bank), "bank {bank}: {banks:?}");
            }
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["fused_dram"], bank);
            assert!(r.to_string().ends_with(&format!(
                "; DRAM bank {bank} is fused off: no stream reads it"
            )));
        }
        let none = on_blackhole(
            None,
            LogicalRect::new(0, 0, 2, 2),
            Along::Row,
            NocId::Noc0,
            SHAPE,
        )
        .unwrap();
        assert!(
            serde_json::to_value(&none)
                .unwrap()
                .get("fused_dram")
                .is_none()
        );
        assert_eq!(
            on_blackhole(
                Some(8),
                LogicalRect::new(0, 0, 2, 2),
                Along::Row,
                NocId::Noc0,
                SHAPE
            )
            .unwrap_err()
            .to_string(),
            "fused DRAM bank 8 does not exist (allowed: 0..=7, or none)"
        );
    }

    #[test]
    fn a_broadcast_the_03_program_does_not_run_has_no_banks() {
        let r = on_blackhole(
            None,
            LogicalRect::new(0, 0, 3, 1),
            Along::Row,
            NocId::Noc1,
            SHAPE,
        )
        .unwrap();
        assert!(r.broadcasts.iter().all(|b| b.banks.is_none()));
        assert!(
            r.to_string().ends_with(
                "no DRAM placement: the 03 program runs rows on NoC0 and columns on NoC1"
            )
        );
        // The JSON says the same as the text: no placement, and why.
        assert_eq!(r.placement, None);
        assert_eq!(
            r.placement_refused.as_deref(),
            Some("the 03 program runs rows on NoC0 and columns on NoC1")
        );
        // A shape the 03 program refuses (a window of 2 x 40,000 pages) places nothing either.
        let r = on_blackhole(
            None,
            LogicalRect::new(0, 0, 3, 1),
            Along::Row,
            NocId::Noc0,
            PlacementShape {
                pages: 40_000,
                ..SHAPE
            },
        )
        .unwrap();
        assert_eq!(r.placement, None);
        assert!(r.broadcasts.iter().all(|b| b.banks.is_none()));
        let text = r.to_string();
        assert!(
            text.ends_with(
                "no DRAM placement: the 03 program refuses this shape: --pages: window * pages = 80000 (allowed: at most 65535)"
            ),
            "{text}"
        );
        // The 03 shape: each sender's banks, and the line saying what they were placed for.
        let r = on_blackhole(
            None,
            LogicalRect::new(0, 0, 3, 1),
            Along::Row,
            NocId::Noc0,
            SHAPE,
        )
        .unwrap();
        let text = r.to_string();
        assert!(text.contains("DRAM banks of page streams 0..7: "), "{text}");
        assert!(
            text.contains("as the 03 program places them for 8 jobs of 16 blocks of 4 pages of 2048 bytes at window 2"),
            "{text}"
        );
    }

    #[test]
    fn the_placement_is_for_the_jobs_and_window_given() {
        let report = |shape| {
            on_blackhole(
                None,
                LogicalRect::new(0, 0, 3, 1),
                Along::Row,
                NocId::Noc0,
                shape,
            )
            .unwrap()
        };
        // Each job's data takes a region of a ring of at most four: the four senders' copies
        // of 1,000 blocks of 512 KiB lie 3 layers deep, which fit a bank twice, not four
        // times.
        let big = PlacementShape {
            jobs: 2,
            window: 1,
            blocks: 1000,
            pages: 16,
            page_size: 32768,
        };
        let r = report(big);
        assert_eq!(r.placement, Some(big));
        assert!(r.broadcasts.iter().any(|b| b.banks.is_some()));
        assert!(
            r.to_string()
                .contains("for 2 jobs of 1000 blocks of 16 pages of 32768 bytes at window 1")
                && r.to_string()
                    .contains("the copies 3 layers deep: 3145728000 bytes of each bank"),
            "{r}"
        );
        let r = report(PlacementShape { jobs: 4, ..big });
        assert_eq!(r.placement, None);
        assert!(
            r.to_string()
                .contains("--jobs: 4 jobs: 1000 blocks of 16 pages of 32768 bytes for 4 senders, their copies 3 layers deep, need 6308233216 bytes per DRAM bank, each job's data one region of a ring of at most 4 (allowed: at most 4278190080: --jobs up to 2)"),
            "{r}"
        );
        // The window sizes the buffers in L1: eight slots of 4,096 pages of 64 bytes do not fit
        // (two buffers of 2 MiB), one slot does.
        let small = PlacementShape {
            jobs: 1,
            window: 8,
            blocks: 16,
            pages: 4096,
            page_size: 64,
        };
        let r = report(small);
        assert_eq!(r.placement, None);
        assert!(r.to_string().contains("--window 8 x --pages 4096"), "{r}");
        let r = report(PlacementShape { window: 1, ..small });
        assert_eq!(r.placement, Some(PlacementShape { window: 1, ..small }));
        assert!(r.to_string().contains("for 1 job of 16 blocks"), "{r}");
    }
}
