//! `komorebi inspect`: every core's broadcast areas (VALID, first give-up, statistics) and its
//! tile's report state, as text, JSON, or a picture of the grid (each core coloured by the
//! cycles it spent waiting, marked where it gave up). Works on any open [`Session`], live or
//! after a run.

use std::path::Path;

use blackhole_pac::grid::Noc0Xy;
use komorebi_broadcast::area::{self, GiveUpRecord};
use komorebi_hal::{LogicalXy, Role};
use komorebi_kernel::abi;
use serde::Serialize;

use crate::host::session::{Session, SessionError};

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
    pub give_up: Option<AreaGiveUp>,
    /// Blocks of the last command that ran this broadcast.
    pub blocks: u32,
    /// Cycles spent waiting in that command.
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
}

/// Reads every core's areas now.
pub fn inspect(session: &Session) -> Result<Inspection, SessionError> {
    let g = session.geometry();
    let mut cores = Vec::new();
    for y in 0..g.rows() {
        for x in 0..g.columns() {
            let core = LogicalXy::new(x, y);
            let w = |offset: u32| session.control_word(core, offset);
            let noc0 = session.noc0(core).map_or((0, 0), Noc0Xy::get);
            let mut areas = Vec::with_capacity(2);
            for id in 0..area::MAX_BROADCASTS {
                let base = area::area(id);
                let valid = w(base + area::VALID)?;
                let record = GiveUpRecord::from_words([
                    w(base + area::GIVE_UP_WHERE)?,
                    w(base + area::GIVE_UP_BLOCK)?,
                    w(base + area::GIVE_UP_SEQUENCE)?,
                ]);
                areas.push(AreaView {
                    valid_sequence: (valid >> 16) as u16,
                    valid_blocks: valid as u16,
                    give_up: record.map(|r| AreaGiveUp {
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
            let areas = [areas[0].clone(), areas[1].clone()];
            cores.push(CoreView {
                core: [x, y],
                noc0: [noc0.0, noc0.1],
                reported: w(abi::REPORT_INDEX)?,
                done,
                areas,
            });
        }
    }
    Ok(Inspection {
        columns: g.columns(),
        rows: g.rows(),
        cores,
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
                match &a.give_up {
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

/// The colour of a core that waited `wait` of at most `max` cycles: white to red.
fn shade(wait: u64, max: u64) -> [u8; 3] {
    let t = if max == 0 {
        0.0
    } else {
        wait as f64 / max as f64
    };
    let c = (255.0 * (1.0 - t)).round() as u8;
    [255, c, c]
}

const CELL: u32 = 40;

impl Inspection {
    fn waits(&self) -> (Vec<u64>, u64) {
        let waits: Vec<u64> = self
            .cores
            .iter()
            .map(|c| c.areas.iter().map(|a| a.wait_cycles as u64).sum())
            .collect();
        let max = waits.iter().copied().max().unwrap_or(0);
        (waits, max)
    }

    /// An SVG picture of the grid.
    pub fn svg(&self) -> String {
        let (waits, max) = self.waits();
        let (w, h) = (self.columns as u32 * CELL, self.rows as u32 * CELL + 20);
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"monospace\" font-size=\"10\">\n"
        );
        for (c, wait) in self.cores.iter().zip(&waits) {
            let [r, g, b] = shade(*wait, max);
            let (x, y) = (c.core[0] as u32 * CELL, c.core[1] as u32 * CELL);
            s += &format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"rgb({r},{g},{b})\" stroke=\"#888\"/>\n"
            );
            s += &format!(
                "<text x=\"{}\" y=\"{}\">{},{}</text>\n",
                x + 3,
                y + 12,
                c.core[0],
                c.core[1]
            );
            if let Some(g) = c.areas.iter().filter_map(|a| a.give_up.as_ref()).next() {
                let mark = g.place.trim_start_matches("broadcast_");
                s += &format!(
                    "<text x=\"{}\" y=\"{}\" fill=\"#000\" font-weight=\"bold\">{mark}</text>\n",
                    x + 3,
                    y + 30
                );
            }
        }
        s += &format!(
            "<text x=\"2\" y=\"{}\">white: no wait, red: {max} wait cycles; labels: first give-up</text>\n</svg>\n",
            h - 6
        );
        s
    }

    /// A PNG picture of the grid (colours only; give-ups drawn as a black corner).
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let (waits, max) = self.waits();
        let (w, h) = (self.columns as u32 * CELL, self.rows as u32 * CELL);
        let mut pixels = vec![255u8; (w * h * 3) as usize];
        for (c, wait) in self.cores.iter().zip(&waits) {
            let colour = shade(*wait, max);
            let gave_up = c.areas.iter().any(|a| a.give_up.is_some());
            for dy in 0..CELL {
                for dx in 0..CELL {
                    let (x, y) = (c.core[0] as u32 * CELL + dx, c.core[1] as u32 * CELL + dy);
                    let border = dx == 0 || dy == 0;
                    let corner = gave_up && dx < CELL / 3 && dy < CELL / 3;
                    let p = if border {
                        [136, 136, 136]
                    } else if corner {
                        [0, 0, 0]
                    } else {
                        colour
                    };
                    let i = ((y * w + x) * 3) as usize;
                    pixels[i..i + 3].copy_from_slice(&p);
                }
            }
        }
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Writes the picture to `path`: SVG for `.svg`, PNG for `.png`; answers its colour
    /// scale's range, for the user.
    pub fn write_picture(&self, path: &Path) -> Result<String, String> {
        let bytes = match path.extension().and_then(|e| e.to_str()) {
            Some("svg") => self.svg().into_bytes(),
            Some("png") => self.png()?,
            _ => {
                return Err(format!(
                    "{}: the picture must be a .svg or .png file",
                    path.display()
                ));
            }
        };
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        let (_, max) = self.waits();
        Ok(format!("wait cycles per core 0..={max}"))
    }
}
