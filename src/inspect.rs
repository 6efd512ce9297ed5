//! `komorebi inspect`: every core's broadcast areas (VALID, first give-up, statistics) and its
//! tile's report state, as text, JSON, or a picture of the grid (each core coloured by the
//! cycles it spent waiting, marked where it gave up). Works on any open [`Session`], live or
//! after a run.

use std::path::Path;

use komorebi_broadcast::area::{self, GiveUpRecord};
use komorebi_hal::{LogicalXy, Role};
use komorebi_kernel::abi;
use serde::Serialize;

use crate::host::device::ClockKind;
use crate::host::session::{Session, SessionError};
use crate::picture::{Canvas, GLYPH_ADVANCE, LINE_HEIGHT, dark, viridis};

/// A first give-up as an area records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AreaGiveUp {
    /// `broadcast_done`, `broadcast_valid`, `broadcast_free` or `broadcast_begin`.
    #[serde(rename = "where")]
    pub place: &'static str,
    /// The broadcast.
    pub broadcast: u8,
    /// The block.
    pub block: u32,
    /// The sequence number of the command it belongs to.
    pub sequence: u32,
}

/// One broadcast area of one core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AreaView {
    /// The VALID word's sequence tag (low half of the command's sequence number).
    pub valid_sequence: u16,
    /// The VALID word's count of blocks cast.
    pub valid_blocks: u16,
    /// The first give-up recorded, if any.
    pub giveup: Option<AreaGiveUp>,
    /// Blocks of the last command that ran this broadcast.
    pub blocks: u32,
    /// Cycles spent waiting in that command (ttsim's clock steps on ttsim: the inspection's
    /// `clock`).
    pub wait_cycles: u32,
}

/// One core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoreView {
    /// Logical coordinates.
    pub core: [u8; 2],
    /// NoC0 coordinates.
    pub noc0: [u8; 2],
    /// The index of the last command the tile reported.
    pub reported: u32,
    /// The index of the last command each kernel finished (reader, writer, compute).
    pub done: [u32; 3],
    /// The index of the last command each data-movement kernel (reader, writer) set its
    /// broadcast up for or refused (`abi::KERNEL_SET_UP`): compute takes no page as a command's
    /// first block before its producer's names the command, so a compute stuck there waits for
    /// this word.
    pub set_up: [u32; 2],
    /// The index of the last command each data-movement kernel (reader, writer) gave up and
    /// recovered from (`abi::KERNEL_RECOVERING`): pages it pushed after that were padding.
    pub recovering: [u32; 2],
    /// Broadcast areas 0 and 1.
    pub areas: [AreaView; 2],
}

/// Every core of the grid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Inspection {
    /// Logical columns.
    pub columns: u8,
    /// Logical rows.
    pub rows: u8,
    /// Cores, row by row.
    pub cores: Vec<CoreView>,
    /// What the areas' wait counts count (as `komorebi broadcast`'s `clock`): device cycles, or
    /// ttsim's clock steps.
    pub clock: ClockKind,
}

/// Reads every core's areas now.
pub fn inspect(session: &Session) -> Result<Inspection, SessionError> {
    let g = session.geometry();
    let mut cores = Vec::new();
    for y in 0..g.rows() {
        for x in 0..g.columns() {
            let core = LogicalXy::new(x, y);
            let w = |offset: u32| session.control_word(core, offset);
            let noc0 = session.noc0(core).map_or((0, 0), |p| (p.x(), p.y()));
            let mut areas = Vec::with_capacity(2);
            for id in 0..area::MAX_BROADCASTS {
                let base = area::area(id);
                let valid = w(base + area::VALID)?;
                let record = GiveUpRecord::read(id, w)?;
                areas.push(AreaView {
                    valid_sequence: (valid >> 16) as u16,
                    valid_blocks: valid as u16,
                    giveup: record.map(|r| AreaGiveUp {
                        place: r.place.name(),
                        broadcast: r.broadcast,
                        block: r.block,
                        sequence: r.sequence,
                    }),
                    blocks: w(base + area::STATS_BLOCKS)?,
                    wait_cycles: w(base + area::STATS_WAIT_CYCLES)?,
                });
            }
            let done = [
                w(abi::kernel_word(abi::KERNEL_DONE, Role::Reader))?,
                w(abi::kernel_word(abi::KERNEL_DONE, Role::Writer))?,
                w(abi::kernel_word(abi::KERNEL_DONE, Role::Compute))?,
            ];
            let movers = |table: u32| -> Result<[u32; 2], SessionError> {
                Ok([
                    w(abi::kernel_word(table, Role::Reader))?,
                    w(abi::kernel_word(table, Role::Writer))?,
                ])
            };
            let areas = [areas[0].clone(), areas[1].clone()];
            cores.push(CoreView {
                core: [x, y],
                noc0: [noc0.0, noc0.1],
                reported: w(abi::REPORT_INDEX)?,
                done,
                set_up: movers(abi::KERNEL_SET_UP)?,
                recovering: movers(abi::KERNEL_RECOVERING)?,
                areas,
            });
        }
    }
    Ok(Inspection {
        columns: g.columns(),
        rows: g.rows(),
        cores,
        clock: session.clock_kind(),
    })
}

impl std::fmt::Display for Inspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "core     noc0     reported  broadcast 0: valid(seq:n) blocks wait / give-up     broadcast 1: ..."
        )?;
        for c in &self.cores {
            write!(
                f,
                "({:2},{:2})  ({:2},{:2})  {:8}",
                c.core[0], c.core[1], c.noc0[0], c.noc0[1], c.reported
            )?;
            for a in &c.areas {
                write!(
                    f,
                    "  {:5}:{:<3} {:4} {:9}",
                    a.valid_sequence, a.valid_blocks, a.blocks, a.wait_cycles
                )?;
                match &a.giveup {
                    Some(g) => write!(
                        f,
                        " {} b{} blk{} seq{}",
                        g.place, g.broadcast, g.block, g.sequence
                    )?,
                    None => write!(f, " -")?,
                }
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

const CELL: u32 = 40;
/// Colour of a core that took part in no broadcast.
const IDLE: [u8; 3] = [200, 200, 200];

/// The file format of `inspect --picture`, from the file's extension.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PictureFormat {
    /// `.svg`: a vector picture.
    Svg,
    /// `.png`: a bitmap.
    Png,
}

impl PictureFormat {
    /// The format a picture file's extension names, in any case (`.SVG` as `.svg`); `None` for
    /// any other extension or none.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("svg") {
            Some(Self::Svg)
        } else if ext.eq_ignore_ascii_case("png") {
            Some(Self::Png)
        } else {
            None
        }
    }
}

/// The colour scale of a picture: wait cycles per core (both broadcast areas), viridis from
/// the least to the most any core that took part waited.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The least wait of a core that took part.
    pub min: u64,
    /// The most.
    pub max: u64,
    /// What the waits count: `cycles`, or ttsim's `steps`.
    pub word: &'static str,
}

impl Scale {
    /// The colour of `wait`.
    fn colour(&self, wait: u64) -> [u8; 3] {
        if self.max == self.min {
            return viridis(0.5);
        }
        viridis((wait.saturating_sub(self.min)) as f64 / (self.max - self.min) as f64)
    }
}

impl std::fmt::Display for Scale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "colour: wait {} per core (A + W), viridis from {} (dark) to {} (light); grey: no broadcast",
            self.word, self.min, self.max
        )
    }
}

impl Inspection {
    /// Each core's wait (both areas) and whether it took part in a broadcast, with the scale
    /// over the cores that did.
    fn waits(&self) -> (Vec<Option<u64>>, Scale) {
        let waits: Vec<Option<u64>> = self
            .cores
            .iter()
            .map(|c| {
                let active = c
                    .areas
                    .iter()
                    .any(|a| a.blocks > 0 || a.wait_cycles > 0 || a.giveup.is_some());
                active.then(|| c.areas.iter().map(|a| a.wait_cycles as u64).sum())
            })
            .collect();
        let seen = waits.iter().flatten();
        let scale = Scale {
            min: seen.clone().copied().min().unwrap_or(0),
            max: seen.copied().max().unwrap_or(0),
            word: self.clock.word(),
        };
        (waits, scale)
    }

    /// An SVG picture of the grid, with its legend.
    pub fn svg(&self) -> String {
        let (waits, scale) = self.waits();
        // Wide enough for the legend's longest line (monospace at font size 10: some 6 px a
        // character; the range starts at x = 264, the other lines at 2).
        const LABELS: &str = "labels: x,y of the core; bold: where it first gave up";
        let range = format!("{} .. {} wait {}", scale.min, scale.max, scale.word);
        let legend = (264 + 6 * range.len())
            .max(2 + 6 * scale.to_string().len())
            .max(2 + 6 * LABELS.len()) as u32
            + 8;
        let (w, grid_h) = (
            (self.columns as u32 * CELL).max(legend),
            self.rows as u32 * CELL,
        );
        let h = grid_h + 70;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"monospace\" font-size=\"10\">\n"
        );
        s += "<defs><linearGradient id=\"scale\">";
        for i in 0..=8 {
            let [r, g, b] = viridis(i as f64 / 8.0);
            s += &format!(
                "<stop offset=\"{}%\" stop-color=\"rgb({r},{g},{b})\"/>",
                i * 100 / 8
            );
        }
        s += "</linearGradient></defs>\n";
        for (c, wait) in self.cores.iter().zip(&waits) {
            let colour = wait.map_or(IDLE, |w| scale.colour(w));
            let [r, g, b] = colour;
            let ink = if dark(colour) { "#fff" } else { "#000" };
            let (x, y) = (c.core[0] as u32 * CELL, c.core[1] as u32 * CELL);
            s += &format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"rgb({r},{g},{b})\" stroke=\"#888\"/>\n"
            );
            s += &format!(
                "<text x=\"{}\" y=\"{}\" fill=\"{ink}\">{},{}</text>\n",
                x + 3,
                y + 12,
                c.core[0],
                c.core[1]
            );
            if let Some(g) = c.areas.iter().filter_map(|a| a.giveup.as_ref()).next() {
                let mark = g.place.trim_start_matches("broadcast_");
                s += &format!(
                    "<text x=\"{}\" y=\"{}\" fill=\"{ink}\" font-weight=\"bold\">{mark}</text>\n",
                    x + 3,
                    y + 30
                );
            }
        }
        let y = grid_h + 8;
        s += &format!(
            "<rect x=\"2\" y=\"{y}\" width=\"256\" height=\"12\" fill=\"url(#scale)\"/>\n<text x=\"264\" y=\"{}\">{range}</text>\n",
            y + 10,
        );
        s += &format!(
            "<text x=\"2\" y=\"{}\">{scale}</text>\n<text x=\"2\" y=\"{}\">{LABELS}</text>\n</svg>\n",
            y + 32,
            y + 48
        );
        s
    }

    /// A PNG picture of the grid (give-ups drawn as a black corner) with its legend: the
    /// colour scale with its range, and what grey and the corners mean.
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let (waits, scale) = self.waits();
        let legend = [
            format!(
                "wait {} per core (a + w): {} .. {}",
                scale.word, scale.min, scale.max
            ),
            "grey: no broadcast. black corner: gave up".to_string(),
        ];
        let longest = legend.iter().map(|l| l.len() as u32).max().unwrap_or(0);
        let grid_h = self.rows as u32 * CELL;
        let w = (self.columns as u32 * CELL).max(longest * GLYPH_ADVANCE * 2 + 8);
        let h = grid_h + 24 + legend.len() as u32 * LINE_HEIGHT * 2 + 8;
        let mut canvas = Canvas::new(w, h, [255; 3]);
        for (c, wait) in self.cores.iter().zip(&waits) {
            let colour = wait.map_or(IDLE, |w| scale.colour(w));
            let (x, y) = (c.core[0] as u32 * CELL, c.core[1] as u32 * CELL);
            canvas.fill(x, y, CELL, CELL, [136; 3]);
            canvas.fill(x + 1, y + 1, CELL - 1, CELL - 1, colour);
            if c.areas.iter().any(|a| a.giveup.is_some()) {
                canvas.fill(x + 1, y + 1, CELL / 3, CELL / 3, [0; 3]);
            }
        }
        // The colour bar: 256 steps from the least wait to the most.
        let bar_y = grid_h + 6;
        for i in 0..256u32 {
            canvas.fill(4 + i, bar_y, 1, 12, viridis(i as f64 / 255.0));
        }
        for (i, line) in legend.iter().enumerate() {
            let y = bar_y + 18 + i as u32 * LINE_HEIGHT * 2;
            canvas.text(4, y, line, 2, [0; 3]);
        }
        canvas.png()
    }

    /// Writes the picture to `path`: SVG for `.svg`, PNG for `.png` (either case); answers its
    /// colour scale with the range, for the user.
    pub fn write_picture(&self, path: &Path) -> Result<String, String> {
        let bytes = match PictureFormat::of(path) {
            Some(PictureFormat::Svg) => self.svg().into_bytes(),
            Some(PictureFormat::Png) => {
                self.png().map_err(|e| format!("{}: {e}", path.display()))?
            }
            None => {
                return Err(format!(
                    "{}: the picture must be a .svg or .png file",
                    path.display()
                ));
            }
        };
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(self.waits().1.to_string())
    }
}
