//! The texture model shared by the interpreter (`tex` in PTX) and the emulator (`TEX`/`TLD` in
//! SASS): what a texture handle names and what a fetch returns.
//!
//! A texture here is what the driver's texture object or bound texture reference describes:
//! a 1D, 2D, 3D or layered 2D array of texels of four 32-bit channels, with a filter mode,
//! an address mode and normalized or unnormalized coordinates. The compiler's job around a
//! texture fetch is plumbing — which registers carry which coordinate, which channel lands
//! in which destination, which handle is used — while the sampling is the hardware's. Both
//! executors therefore sample through this one function, so that comparing them checks the
//! plumbing; the sampling rules follow CUDA's documented behaviour (CUDA C++ Programming
//! Guide, "Texture Fetching"): point sampling takes the texel `floor(x)`, linear filtering
//! blends the texels around `x - 0.5` with weights kept in 9-bit fixed point (8 fraction
//! bits), and the address modes clamp, wrap, mirror or return the border (zero).
//!
//! Not modelled: mipmaps (every texture has one level, so every level-of-detail selects it),
//! cube maps, sRGB, channel formats narrower than 32 bits (a texel's channels are raw 32-bit
//! words: `F32` textures filter them as floats, `U32` textures are point-sampled words), and
//! the hardware's own filtering arithmetic beyond the weight quantization. A handle that names
//! no texture is an error for the caller to report.

/// The shape of a texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexShape {
    D1,
    D2,
    D3,
    /// A layered 2D texture (`tex.a2d`): `depth` layers of `width × height`.
    Array2D,
}

/// How a texel's channels are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexFormat {
    /// Four `f32` channels; linear filtering blends them.
    F32,
    /// Four 32-bit integer channels; always point-sampled.
    U32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Filter {
    Point,
    Linear,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressMode {
    Clamp,
    Wrap,
    Mirror,
    /// Outside the texture reads zero.
    Border,
}

/// One texture: its description and texels (four words each, x fastest, then y, then z or
/// the layer).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    pub shape: TexShape,
    pub width: u32,
    pub height: u32,
    /// Depth of a 3D texture, or the number of layers of a layered one; 1 otherwise.
    pub depth: u32,
    pub format: TexFormat,
    pub filter: Filter,
    pub address: AddressMode,
    /// Float coordinates are in [0, 1) across the texture rather than in texels.
    pub normalized: bool,
    pub texels: Vec<[u32; 4]>,
}

/// Coordinates of one fetch. Unused trailing coordinates are ignored (a 1D texture reads
/// only `x`), as are coordinates past the texture's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Coords {
    /// Integer texel coordinates (PTX `tex` with `.s32` coordinates, SASS `TLD`): no
    /// filtering, no normalization; the address mode still applies.
    Int([i32; 3]),
    /// Float coordinates (PTX `.f32` coordinates, SASS `TEX`).
    Float([f32; 3]),
}

impl Texture {
    /// A texture of the given shape filled by `texel(i)` for texel index `i`.
    pub fn new(
        shape: TexShape,
        [width, height, depth]: [u32; 3],
        format: TexFormat,
        filter: Filter,
        address: AddressMode,
        normalized: bool,
        mut texel: impl FnMut(usize) -> [u32; 4],
    ) -> Texture {
        let (height, depth) = match shape {
            TexShape::D1 => (1, 1),
            TexShape::D2 => (height.max(1), 1),
            TexShape::D3 | TexShape::Array2D => (height.max(1), depth.max(1)),
        };
        let width = width.max(1);
        let n = width as usize * height as usize * depth as usize;
        Texture {
            shape,
            width,
            height,
            depth,
            format,
            filter: if format == TexFormat::U32 {
                Filter::Point
            } else {
                filter
            },
            address,
            normalized,
            texels: (0..n).map(&mut texel).collect(),
        }
    }

    /// Number of coordinates the shape uses (the layer of a layered texture is separate).
    pub fn dims(&self) -> usize {
        match self.shape {
            TexShape::D1 => 1,
            TexShape::D2 | TexShape::Array2D => 2,
            TexShape::D3 => 3,
        }
    }

    fn extent(&self, d: usize) -> u32 {
        [self.width, self.height, self.depth][d]
    }

    /// The texel at integer coordinates after the address mode, or `None` for the border.
    fn texel(&self, layer: u32, at: [i64; 3]) -> Option<[u32; 4]> {
        let mut idx = [0u64; 3];
        for d in 0..self.dims() {
            idx[d] = self.address(at[d], self.extent(d))?;
        }
        let z = match self.shape {
            TexShape::D3 => idx[2],
            TexShape::Array2D => u64::from(layer.min(self.depth - 1)),
            _ => 0,
        };
        let i = (z * u64::from(self.height) + idx[1]) * u64::from(self.width) + idx[0];
        Some(self.texels[i as usize])
    }

    fn address(&self, i: i64, n: u32) -> Option<u64> {
        let n = i64::from(n);
        let r = match self.address {
            AddressMode::Clamp => i.clamp(0, n - 1),
            AddressMode::Border if !(0..n).contains(&i) => return None,
            AddressMode::Border => i,
            AddressMode::Wrap => i.rem_euclid(n),
            AddressMode::Mirror => {
                let m = i.rem_euclid(2 * n);
                if m < n { m } else { 2 * n - 1 - m }
            }
        };
        Some(r as u64)
    }

    /// Fetches four channels: `layer` selects the layer of a layered texture (clamped to
    /// the last one), `coords` the place.
    pub fn fetch(&self, layer: u32, coords: Coords) -> [u32; 4] {
        let dims = self.dims();
        match coords {
            Coords::Int(c) => {
                let at = [i64::from(c[0]), i64::from(c[1]), i64::from(c[2])];
                self.texel(layer, at).unwrap_or([0; 4])
            }
            Coords::Float(c) => {
                let mut u = [0f32; 3];
                for d in 0..dims {
                    u[d] = if self.normalized {
                        c[d] * self.extent(d) as f32
                    } else {
                        c[d]
                    };
                }
                match self.filter {
                    Filter::Point => {
                        let at = u.map(floor_index);
                        self.texel(layer, at).unwrap_or([0; 4])
                    }
                    Filter::Linear => self.linear(layer, u),
                }
            }
        }
    }

    fn linear(&self, layer: u32, u: [f32; 3]) -> [u32; 4] {
        let dims = self.dims();
        let mut base = [0i64; 3];
        let mut frac = [0f32; 3];
        for d in 0..dims {
            let x = u[d] - 0.5;
            base[d] = floor_index(x);
            // The weight in 1.8 fixed point: 256 steps between neighbours.
            let f = if x.is_finite() { x - x.floor() } else { 0.0 };
            frac[d] = (f * 256.0).round() / 256.0;
        }
        let mut acc = [0f32; 4];
        for corner in 0..(1usize << dims) {
            let mut w = 1f32;
            let mut at = base;
            for d in 0..dims {
                if corner >> d & 1 == 1 {
                    at[d] += 1;
                    w *= frac[d];
                } else {
                    w *= 1.0 - frac[d];
                }
            }
            if w == 0.0 {
                continue;
            }
            let t = self.texel(layer, at).unwrap_or([0; 4]);
            for ch in 0..4 {
                acc[ch] += w * f32::from_bits(t[ch]);
            }
        }
        acc.map(f32::to_bits)
    }
}

/// `floor(x)` as a texel index; NaN reads texel 0, infinities saturate.
fn floor_index(x: f32) -> i64 {
    if x.is_nan() {
        0
    } else {
        (x.floor() as f64).clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64
    }
}

/// The textures of one memory: handles (what a kernel parameter of type
/// `cudaTextureObject_t` carries, or what the driver writes into a bound texture reference's
/// constant-bank slot) are 1-based indices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Textures {
    textures: Vec<Texture>,
    /// Bound texture references (`.texref` module variables) by name.
    bound: Vec<(String, u32)>,
}

impl Textures {
    /// Adds a texture and returns its handle.
    pub fn add(&mut self, t: Texture) -> u32 {
        self.textures.push(t);
        self.textures.len() as u32
    }

    /// The texture a handle names (only its low 32 bits count, as on the hardware).
    pub fn get(&self, handle: u64) -> Option<&Texture> {
        let h = handle as u32;
        (h as usize)
            .checked_sub(1)
            .and_then(|i| self.textures.get(i))
    }

    /// Binds the texture reference `name` to `handle`.
    pub fn bind(&mut self, name: &str, handle: u32) {
        self.bound.retain(|(n, _)| n != name);
        self.bound.push((name.to_string(), handle));
    }

    /// The handle bound to texture reference `name`.
    pub fn bound(&self, name: &str) -> Option<u32> {
        self.bound.iter().find(|(n, _)| n == name).map(|(_, h)| *h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(shape: TexShape, size: [u32; 3], filter: Filter, address: AddressMode) -> Texture {
        Texture::new(shape, size, TexFormat::F32, filter, address, false, |i| {
            let v = (i as f32).to_bits();
            [v, v, v, (i as u32).wrapping_mul(3)]
        })
    }

    fn f(t: [u32; 4]) -> f32 {
        f32::from_bits(t[0])
    }

    #[test]
    fn point_sampling_takes_the_texel_under_the_coordinate() {
        let t = ramp(TexShape::D2, [4, 3, 1], Filter::Point, AddressMode::Clamp);
        assert_eq!(f(t.fetch(0, Coords::Float([1.9, 2.2, 0.0]))), 9.0); // (1, 2)
        assert_eq!(f(t.fetch(0, Coords::Float([-5.0, 9.0, 0.0]))), 8.0); // clamped to (0, 2)
        assert_eq!(f(t.fetch(0, Coords::Int([3, 1, 0]))), 7.0);
    }

    #[test]
    fn linear_filtering_blends_neighbours_with_8_bit_weights() {
        let t = ramp(TexShape::D1, [8, 1, 1], Filter::Linear, AddressMode::Clamp);
        // Texel centres: x = 2.5 reads texel 2 exactly, x = 3.0 halfway between 2 and 3.
        assert_eq!(f(t.fetch(0, Coords::Float([2.5, 0.0, 0.0]))), 2.0);
        assert_eq!(f(t.fetch(0, Coords::Float([3.0, 0.0, 0.0]))), 2.5);
        // A weight of 1/3 is kept as 85/256.
        let w = f(t.fetch(0, Coords::Float([2.5 + 1.0 / 3.0, 0.0, 0.0])));
        assert_eq!(w, 2.0 + 85.0 / 256.0);
    }

    #[test]
    fn address_modes() {
        let mk = |a| ramp(TexShape::D1, [4, 1, 1], Filter::Point, a);
        let at = |t: &Texture, x| f(t.fetch(0, Coords::Int([x, 0, 0])));
        assert_eq!(at(&mk(AddressMode::Clamp), 6), 3.0);
        assert_eq!(at(&mk(AddressMode::Wrap), 6), 2.0);
        assert_eq!(at(&mk(AddressMode::Wrap), -1), 3.0);
        assert_eq!(at(&mk(AddressMode::Mirror), 4), 3.0);
        assert_eq!(at(&mk(AddressMode::Mirror), -1), 0.0);
        assert_eq!(
            mk(AddressMode::Border).fetch(0, Coords::Int([4, 0, 0])),
            [0; 4]
        );
    }

    #[test]
    fn layers_and_normalized_coordinates() {
        let t = Texture::new(
            TexShape::Array2D,
            [2, 2, 3],
            TexFormat::U32,
            Filter::Linear,
            AddressMode::Clamp,
            true,
            |i| [i as u32, 0, 0, 0],
        );
        assert_eq!(
            t.filter,
            Filter::Point,
            "integer textures are point-sampled"
        );
        assert_eq!(t.fetch(2, Coords::Float([0.75, 0.25, 0.0]))[0], 9);
        assert_eq!(
            t.fetch(70000, Coords::Int([0, 1, 0]))[0],
            10,
            "layer clamps"
        );
    }

    #[test]
    fn handles_are_one_based_and_low_32_bits() {
        let mut ts = Textures::default();
        let h = ts.add(ramp(
            TexShape::D1,
            [2, 1, 1],
            Filter::Point,
            AddressMode::Clamp,
        ));
        assert_eq!(h, 1);
        assert!(ts.get(0).is_none());
        assert!(ts.get(0xdead_0000_0001).is_some());
        ts.bind("tex", h);
        assert_eq!(ts.bound("tex"), Some(1));
        assert_eq!(ts.bound("other"), None);
    }
}
