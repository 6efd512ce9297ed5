//! Drawing the pictures of `komorebi inspect`: a perceptual colour map (viridis), and an RGB
//! canvas with filled rectangles and a small 5x9 bitmap font (7 rows and 2 of descenders) for
//! the PNG's legend, encoded as PNG.
//!
//! Leaf module: imports nothing of the crate.

/// Viridis at 9 points (matplotlib's map, perceptually uniform and readable in grey and by
/// colour-blind readers): dark purple (low) to yellow (high).
const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// The viridis colour at `t` in `0.0..=1.0` (clamped), interpolated between its 9 points.
pub fn viridis(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    core::array::from_fn(|c| (a[c] as f64 + (b[c] as f64 - a[c] as f64) * f).round() as u8)
}

/// Whether text on `colour` reads better in white than in black.
pub fn dark(colour: [u8; 3]) -> bool {
    let [r, g, b] = colour.map(f64::from);
    0.299 * r + 0.587 * g + 0.114 * b < 128.0
}

/// Glyph rows, top to bottom, 5 bits each (bit 4 the leftmost pixel): 7 rows above the
/// baseline and 2 for descenders. Upper case is drawn as
/// lower case; a character not here is drawn as a space.
const FONT: [(char, [u8; 9]); 45] = [
    (
        'a',
        [
            0b00000, 0b00000, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111, 0b00000, 0b00000,
        ],
    ),
    (
        'b',
        [
            0b10000, 0b10000, 0b11110, 0b10001, 0b10001, 0b10001, 0b11110, 0b00000, 0b00000,
        ],
    ),
    (
        'c',
        [
            0b00000, 0b00000, 0b01111, 0b10000, 0b10000, 0b10000, 0b01111, 0b00000, 0b00000,
        ],
    ),
    (
        'd',
        [
            0b00001, 0b00001, 0b01111, 0b10001, 0b10001, 0b10001, 0b01111, 0b00000, 0b00000,
        ],
    ),
    (
        'e',
        [
            0b00000, 0b00000, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        'f',
        [
            0b00110, 0b01000, 0b11110, 0b01000, 0b01000, 0b01000, 0b01000, 0b00000, 0b00000,
        ],
    ),
    (
        'g',
        [
            0b00000, 0b00000, 0b01111, 0b10001, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110,
        ],
    ),
    (
        'h',
        [
            0b10000, 0b10000, 0b11110, 0b10001, 0b10001, 0b10001, 0b10001, 0b00000, 0b00000,
        ],
    ),
    (
        'i',
        [
            0b00100, 0b00000, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        'j',
        [
            0b00010, 0b00000, 0b00110, 0b00010, 0b00010, 0b00010, 0b00010, 0b10010, 0b01100,
        ],
    ),
    (
        'k',
        [
            0b10000, 0b10000, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010, 0b00000, 0b00000,
        ],
    ),
    (
        'l',
        [
            0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        'm',
        [
            0b00000, 0b00000, 0b11010, 0b10101, 0b10101, 0b10101, 0b10101, 0b00000, 0b00000,
        ],
    ),
    (
        'n',
        [
            0b00000, 0b00000, 0b11110, 0b10001, 0b10001, 0b10001, 0b10001, 0b00000, 0b00000,
        ],
    ),
    (
        'o',
        [
            0b00000, 0b00000, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        'p',
        [
            0b00000, 0b00000, 0b11110, 0b10001, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000,
        ],
    ),
    (
        'q',
        [
            0b00000, 0b00000, 0b01111, 0b10001, 0b10001, 0b10001, 0b01111, 0b00001, 0b00001,
        ],
    ),
    (
        'r',
        [
            0b00000, 0b00000, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000, 0b00000, 0b00000,
        ],
    ),
    (
        's',
        [
            0b00000, 0b00000, 0b01111, 0b10000, 0b01110, 0b00001, 0b11110, 0b00000, 0b00000,
        ],
    ),
    (
        't',
        [
            0b01000, 0b01000, 0b11110, 0b01000, 0b01000, 0b01001, 0b00110, 0b00000, 0b00000,
        ],
    ),
    (
        'u',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101, 0b00000, 0b00000,
        ],
    ),
    (
        'v',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100, 0b00000, 0b00000,
        ],
    ),
    (
        'w',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10101, 0b10101, 0b01010, 0b00000, 0b00000,
        ],
    ),
    (
        'x',
        [
            0b00000, 0b00000, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001, 0b00000, 0b00000,
        ],
    ),
    (
        'y',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110,
        ],
    ),
    (
        'z',
        [
            0b00000, 0b00000, 0b11111, 0b00010, 0b00100, 0b01000, 0b11111, 0b00000, 0b00000,
        ],
    ),
    (
        '0',
        [
            0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '1',
        [
            0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '2',
        [
            0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111, 0b00000, 0b00000,
        ],
    ),
    (
        '3',
        [
            0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '4',
        [
            0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010, 0b00000, 0b00000,
        ],
    ),
    (
        '5',
        [
            0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '6',
        [
            0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '7',
        [
            0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00000, 0b00000,
        ],
    ),
    (
        '8',
        [
            0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110, 0b00000, 0b00000,
        ],
    ),
    (
        '9',
        [
            0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100, 0b00000, 0b00000,
        ],
    ),
    (
        ':',
        [
            0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '.',
        [
            0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100, 0b00000, 0b00000,
        ],
    ),
    (
        ',',
        [
            0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100, 0b00100, 0b01000,
        ],
    ),
    (
        '-',
        [
            0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '(',
        [
            0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00100, 0b00010, 0b00000, 0b00000,
        ],
    ),
    (
        ')',
        [
            0b01000, 0b00100, 0b00010, 0b00010, 0b00010, 0b00100, 0b01000, 0b00000, 0b00000,
        ],
    ),
    (
        '/',
        [
            0b00000, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '=',
        [
            0b00000, 0b00000, 0b11111, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '+',
        [
            0b00000, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0b00000, 0b00000, 0b00000,
        ],
    ),
];

/// Pixels a glyph advances at scale 1 (5 wide and a gap).
pub const GLYPH_ADVANCE: u32 = 6;
/// Pixels of a line of text at scale 1 (9 high with descenders, and a gap).
pub const LINE_HEIGHT: u32 = 11;

/// An RGB picture being drawn.
#[derive(Clone, Debug)]
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A `width` x `height` canvas, all `background`.
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Self {
        let pixels = background
            .iter()
            .copied()
            .cycle()
            .take(width as usize * height as usize * 3)
            .collect();
        Self {
            width,
            height,
            pixels,
        }
    }

    /// Sets one pixel (outside the canvas: nothing).
    pub fn set(&mut self, x: u32, y: u32, colour: [u8; 3]) {
        if x < self.width && y < self.height {
            let i = (y as usize * self.width as usize + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&colour);
        }
    }

    /// Fills the rectangle at `(x, y)` of `w` x `h` pixels: its part on the canvas (a part
    /// past `u32::MAX` is off it, never wrapped round to the other side).
    pub fn fill(&mut self, x: u32, y: u32, w: u32, h: u32, colour: [u8; 3]) {
        let x_end = x.saturating_add(w).min(self.width);
        let y_end = y.saturating_add(h).min(self.height);
        for py in y..y_end {
            for px in x..x_end {
                self.set(px, py, colour);
            }
        }
    }

    /// Draws `text` with its top left at `(x, y)`, each font pixel `scale` x `scale`.
    pub fn text(&mut self, x: u32, y: u32, text: &str, scale: u32, colour: [u8; 3]) {
        for (i, ch) in text.chars().enumerate() {
            let ch = ch.to_ascii_lowercase();
            let Some((_, rows)) = FONT.iter().find(|(c, _)| *c == ch) else {
                continue;
            };
            let at = |base: u32, step: u32, n: u32| base.saturating_add(step.saturating_mul(n));
            let gx = at(x, GLYPH_ADVANCE.saturating_mul(scale), i as u32);
            for (r, bits) in rows.iter().enumerate() {
                for c in 0..5u32 {
                    if bits & (0b10000 >> c) != 0 {
                        let (px, py) = (at(gx, scale, c), at(y, scale, r as u32));
                        self.fill(px, py, scale, scale, colour);
                    }
                }
            }
        }
    }

    /// The picture as a PNG file.
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&self.pixels)
            .map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_lies_past_the_edge_is_off_the_canvas_never_wrapped_round() {
        let mut c = Canvas::new(4, 1, [0; 3]);
        c.fill(u32::MAX, 0, 2, 1, [9, 9, 9]);
        c.text(u32::MAX - 3, 0, "ab", 2, [9, 9, 9]);
        assert!(c.pixels.iter().all(|&p| p == 0), "nothing painted");
        c.fill(3, 0, 5, 5, [1, 2, 3]);
        assert_eq!(&c.pixels[9..], &[1, 2, 3]);
        assert!(c.pixels[..9].iter().all(|&p| p == 0));
    }

    #[test]
    fn viridis_ends_and_middle() {
        assert_eq!(viridis(0.0), [68, 1, 84]);
        assert_eq!(viridis(1.0), [253, 231, 37]);
        assert_eq!(viridis(0.5), [33, 144, 141]);
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        assert!(dark(viridis(0.0)) && !dark(viridis(1.0)));
    }

    #[test]
    fn text_draws_known_glyphs_only() {
        let mut c = Canvas::new(20, 9, [255; 3]);
        c.text(0, 0, "1?", 1, [0; 3]);
        // '1' has its top pixel in column 2; '?' is not in the font: columns 6.. stay white.
        assert_eq!(&c.pixels[2 * 3..2 * 3 + 3], &[0, 0, 0]);
        for y in 0..9 {
            let row = &c.pixels[y * 20 * 3..(y + 1) * 20 * 3];
            assert!(row[6 * 3..].iter().all(|&p| p == 255), "row {y}");
        }
    }
}
