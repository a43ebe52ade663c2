//! The surface model shared by the interpreter (`suld.b`/`sust.b` in PTX) and the emulator
//! (`SULD`/`SUST` in SASS): what a surface handle names and what an unformatted access reads
//! or writes.
//!
//! A surface is what the driver's surface object describes: a 1D, 2D or 3D array, or a layered
//! 1D or 2D array, of rows of bytes. Unformatted (`.b`) accesses address the x coordinate in
//! bytes (PTX ISA, "Surface Instructions: suld"), y in rows and z in slices or layers, and move
//! 1 to 16 bytes. The out-of-bounds mode decides what an access outside the surface does:
//! `.trap` traps, `.clamp` clamps the coordinates into the surface (x to the last whole element
//! of the row), `.zero` reads zeros and drops stores.
//!
//! Not modelled: formatted accesses (`.p`: channel formats, conversions), `sured`, `suq`,
//! `.surfref` module variables. A handle that names no surface is an error for the caller to
//! report.

/// The shape of a surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfShape {
    D1,
    D2,
    D3,
    /// `depth` layers of one row each (`.a1d`).
    Array1D,
    /// `depth` layers of `height` rows (`.a2d`).
    Array2D,
}

impl SurfShape {
    /// Coordinates after x: 0 for 1D, 1 for 2D and layered 1D, 2 for 3D and layered 2D.
    pub fn extra_coords(self) -> usize {
        match self {
            SurfShape::D1 => 0,
            SurfShape::D2 | SurfShape::Array1D => 1,
            SurfShape::D3 | SurfShape::Array2D => 2,
        }
    }
}

/// What an access outside the surface does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutOfBounds {
    Trap,
    Clamp,
    Zero,
}

/// One surface: rows of `width` bytes, `height` rows per slice, `depth` slices or layers.
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    pub shape: SurfShape,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub data: Vec<u8>,
}

/// Where an access lands: a byte offset into [`Surface::data`], or nowhere (dropped store,
/// zero read) — or out of bounds in `.trap` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    At(usize),
    Nowhere,
    OutOfBounds,
}

impl Surface {
    /// A zero-filled surface (`height`/`depth` are forced to 1 where the shape has no such
    /// dimension).
    pub fn new(shape: SurfShape, width: u32, height: u32, depth: u32) -> Surface {
        let height = match shape {
            SurfShape::D1 | SurfShape::Array1D => 1,
            _ => height.max(1),
        };
        let depth = match shape {
            SurfShape::D3 | SurfShape::Array1D | SurfShape::Array2D => depth.max(1),
            _ => 1,
        };
        Surface {
            shape,
            width,
            height,
            depth,
            data: vec![0; width as usize * height as usize * depth as usize],
        }
    }

    /// Where an `n`-byte access at `x` bytes, `y` (row) and `z` (slice or layer) lands. For a
    /// layered 1D surface `y` is the layer.
    pub fn place(&self, x: i32, y: i32, z: i32, n: usize, mode: OutOfBounds) -> Place {
        let (y, z) = match self.shape {
            SurfShape::D1 => (0, 0),
            SurfShape::D2 => (y, 0),
            SurfShape::Array1D => (0, y),
            SurfShape::D3 | SurfShape::Array2D => (y, z),
        };
        let n = n as i64;
        let (w, h, d) = (
            i64::from(self.width),
            i64::from(self.height),
            i64::from(self.depth),
        );
        let (mut x, mut y, mut z) = (i64::from(x), i64::from(y), i64::from(z));
        let inside = x >= 0 && x + n <= w && (0..h).contains(&y) && (0..d).contains(&z);
        if !inside {
            match mode {
                OutOfBounds::Trap => return Place::OutOfBounds,
                OutOfBounds::Zero => return Place::Nowhere,
                OutOfBounds::Clamp => {
                    if w < n {
                        return Place::Nowhere;
                    }
                    x = x.clamp(0, w - n);
                    y = y.clamp(0, h - 1);
                    z = z.clamp(0, d - 1);
                }
            }
        }
        Place::At(((z * h + y) * w + x) as usize)
    }
}

/// The surfaces of a memory, by handle (1, 2, ...; 0 names none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surfaces {
    surfaces: Vec<Surface>,
}

impl Surfaces {
    /// Adds a surface and returns its handle.
    pub fn add(&mut self, s: Surface) -> u32 {
        self.surfaces.push(s);
        self.surfaces.len() as u32
    }

    /// The surface a handle names (only its low 32 bits count, as on the hardware).
    pub fn get(&self, handle: u64) -> Option<&Surface> {
        (handle as u32 as usize)
            .checked_sub(1)
            .and_then(|i| self.surfaces.get(i))
    }

    pub fn get_mut(&mut self, handle: u64) -> Option<&mut Surface> {
        (handle as u32 as usize)
            .checked_sub(1)
            .and_then(|i| self.surfaces.get_mut(i))
    }

    /// Every surface, in handle order.
    pub fn all(&self) -> &[Surface] {
        &self.surfaces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_follow_the_shape_and_the_mode() {
        let s = Surface::new(SurfShape::D2, 16, 4, 9);
        assert_eq!(s.depth, 1);
        assert_eq!(s.data.len(), 64);
        assert_eq!(s.place(4, 2, 7, 4, OutOfBounds::Trap), Place::At(36));
        assert_eq!(s.place(13, 0, 0, 4, OutOfBounds::Trap), Place::OutOfBounds);
        assert_eq!(s.place(13, 0, 0, 4, OutOfBounds::Zero), Place::Nowhere);
        assert_eq!(
            s.place(13, 9, 0, 4, OutOfBounds::Clamp),
            Place::At(3 * 16 + 12)
        );
        assert_eq!(s.place(-2, -1, 0, 2, OutOfBounds::Clamp), Place::At(0));
        let a = Surface::new(SurfShape::Array1D, 8, 5, 3);
        assert_eq!(a.height, 1);
        // y is the layer of a layered 1D surface.
        assert_eq!(a.place(2, 2, 0, 1, OutOfBounds::Trap), Place::At(18));
        let v = Surface::new(SurfShape::Array2D, 8, 2, 3);
        assert_eq!(
            v.place(0, 1, 2, 8, OutOfBounds::Trap),
            Place::At((2 * 2 + 1) * 8)
        );
        assert_eq!(v.place(0, 2, 0, 8, OutOfBounds::Trap), Place::OutOfBounds);
    }

    #[test]
    fn handles_count_from_one() {
        let mut all = Surfaces::default();
        let h = all.add(Surface::new(SurfShape::D1, 4, 1, 1));
        assert_eq!(h, 1);
        assert!(all.get(0).is_none());
        assert!(all.get(u64::from(h) | 0xffff_0000_0000_0000).is_some());
        assert!(all.get(2).is_none());
    }
}
