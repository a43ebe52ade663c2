//! Occupancy: how many blocks of a kernel an SM holds at once, as CUDA computes it.
//!
//! The per-SM limits are data (`data/occupancy.tsv`, each row with its source); the rules are
//! those of NVIDIA's occupancy calculator, `cudaOccMaxActiveBlocksPerMultiprocessor` in the
//! CUDA 13.0 toolkit's `cuda_occupancy.h`, step for step. `cargo xtask occupancy-check`
//! compiles that header and compares [`OccupancyLimits::occupancy`] with it over a grid of
//! launches on every SM.

use std::sync::OnceLock;

/// An SM's occupancy limits (`data/occupancy.tsv`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OccupancyLimits {
    /// The number after `sm_`.
    pub sm: u16,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    /// Resident threads per SM (warps per SM: this / `warp_size`).
    pub max_threads_per_sm: u32,
    /// Resident blocks per SM.
    pub max_blocks_per_sm: u32,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    pub max_registers_per_thread: u32,
    /// A warp's registers are allocated in multiples of this.
    pub register_allocation_unit: u32,
    /// A block's warps are rounded up to a multiple of this for the register-file check (the
    /// SM's sub-partitions).
    pub register_sub_partitions: u32,
    /// Bytes of shared memory an SM can be configured to hold at most.
    pub shared_per_sm: u32,
    /// Bytes of shared memory a block may use without opting in.
    pub shared_per_block: u32,
    /// Bytes of shared memory a block may use after opting in
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`).
    pub shared_per_block_optin: u32,
    /// Bytes of shared memory the driver reserves in every block.
    pub shared_reserved_per_block: u32,
    /// A block's shared memory is allocated in multiples of this.
    pub shared_allocation_unit: u32,
    /// The shared-memory sizes (bytes) an SM's L1/shared split can be set to, smallest first.
    pub shared_carveouts: Vec<u32>,
    /// From compute capability 9.0 an SM has `barrier_factor * max_blocks_per_sm` block
    /// barriers; `None`: barriers do not limit occupancy.
    pub barrier_factor: Option<u32>,
}

/// One launch of a kernel, as the occupancy calculator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Registers per thread (`-v`'s count).
    pub registers: u32,
    /// Threads per block.
    pub threads: u32,
    /// Bytes of static shared memory (`-v`'s `smem`, without the driver's reserved bytes).
    pub static_shared: u32,
    /// Bytes of dynamic shared memory per block. Beyond the default per-block limit the
    /// kernel is taken to have opted in to the most it may use
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize` = opt-in limit - static), as a launch
    /// with that much must.
    pub dynamic_shared: u32,
    /// Named barriers the kernel uses (`-v`'s `used N barriers`).
    pub barriers: u32,
    /// The shared-memory carveout preference in percent of the SM's maximum
    /// (`cudaFuncAttributePreferredSharedMemoryCarveout`); `None`: the default (the most).
    pub carveout: Option<u8>,
}

impl Launch {
    /// A launch of `threads` threads per block with no dynamic shared memory, default
    /// carveout.
    pub fn new(registers: u32, threads: u32, static_shared: u32, barriers: u32) -> Launch {
        Launch {
            registers,
            threads,
            static_shared,
            dynamic_shared: 0,
            barriers,
            carveout: None,
        }
    }
}

/// What limits a launch's occupancy (several can at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limiter {
    Warps,
    Registers,
    SharedMemory,
    Blocks,
    Barriers,
}

impl Limiter {
    /// The limiters as `cuda_occupancy.h`'s `cudaOccLimitingFactor` bit set.
    pub fn cuda_bits(limiters: &[Limiter]) -> u32 {
        limiters
            .iter()
            .map(|l| match l {
                Limiter::Warps => 0x01,
                Limiter::Registers => 0x02,
                Limiter::SharedMemory => 0x04,
                Limiter::Blocks => 0x08,
                Limiter::Barriers => 0x10,
            })
            .sum()
    }

    pub fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
            Limiter::Blocks => "blocks",
            Limiter::Barriers => "barriers",
        }
    }
}

/// The occupancy of a launch on one SM.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Occupancy {
    /// Blocks resident per SM (0: the launch cannot run).
    pub blocks: u32,
    /// Warps resident per SM.
    pub warps: u32,
    /// Warps an SM holds at most.
    pub max_warps: u32,
    /// The limits the block count equals, in `cudaOccLimitingFactor`'s order.
    pub limiters: Vec<Limiter>,
}

impl Occupancy {
    /// Resident warps in percent of the most an SM holds, rounded to the nearest integer.
    pub fn percent(&self) -> u32 {
        if self.max_warps == 0 {
            return 0;
        }
        (self.warps * 100 + self.max_warps / 2) / self.max_warps
    }
}

/// "No limit" (the header's `INT_MAX`).
const UNLIMITED: u64 = i32::MAX as u64;

impl OccupancyLimits {
    /// The limits of `sm_<number>`, if kiln knows the SM.
    pub fn of(number: u32) -> Option<&'static OccupancyLimits> {
        table().iter().find(|l| u32::from(l.sm) == number)
    }

    /// Every SM's limits, in the data file's order.
    pub fn all() -> &'static [OccupancyLimits] {
        table()
    }

    /// Warps an SM holds at most.
    pub fn max_warps_per_sm(&self) -> u32 {
        self.max_threads_per_sm / self.warp_size
    }

    /// The shared memory (bytes) an SM is configured to for a request of `size` bytes: the
    /// smallest carveout that holds it (`cudaOccAlignUpShmemSizeVoltaPlus`); `None` when none
    /// does.
    pub fn carveout_for(&self, size: u64) -> Option<u64> {
        self.shared_carveouts
            .iter()
            .map(|&c| u64::from(c))
            .find(|&c| size <= c)
    }

    /// Active blocks and warps per SM for `launch`: `cudaOccMaxActiveBlocksPerMultiprocessor`
    /// with partitioned global caching off, no virtual resources, and the kernel opted in to
    /// the most dynamic shared memory it may use.
    pub fn occupancy(&self, launch: &Launch) -> Occupancy {
        let warps_per_block = u64::from(launch.threads.div_ceil(self.warp_size));
        let by_regs = self.blocks_by_registers(launch, warps_per_block);
        let by_warps = if launch.threads > self.max_threads_per_block || warps_per_block == 0 {
            0
        } else {
            u64::from(self.max_warps_per_sm()) / warps_per_block
        };
        let by_blocks = u64::from(self.max_blocks_per_sm);
        let by_smem = self.blocks_by_shared_memory(launch);
        let mut blocks = by_regs.min(by_smem).min(by_warps).min(by_blocks);
        let mut limiters = Vec::new();
        for (limit, l) in [
            (by_warps, Limiter::Warps),
            (by_regs, Limiter::Registers),
            (by_smem, Limiter::SharedMemory),
            (by_blocks, Limiter::Blocks),
        ] {
            if limit == blocks {
                limiters.push(l);
            }
        }
        if let (Some(factor), true) = (self.barrier_factor, launch.barriers > 0) {
            let by_barriers = u64::from(factor * self.max_blocks_per_sm / launch.barriers);
            blocks = blocks.min(by_barriers);
            if by_barriers == blocks {
                limiters.push(Limiter::Barriers);
            }
        }
        let blocks = blocks.min(UNLIMITED) as u32;
        Occupancy {
            blocks,
            warps: blocks * warps_per_block as u32,
            max_warps: self.max_warps_per_sm(),
            limiters,
        }
    }

    /// `cudaOccMaxBlocksPerSMRegsLimit`.
    fn blocks_by_registers(&self, launch: &Launch, warps_per_block: u64) -> u64 {
        let unit = u64::from(self.register_allocation_unit);
        let per_warp =
            (u64::from(launch.registers) * u64::from(self.warp_size)).div_ceil(unit) * unit;
        let per_block = per_warp * warps_per_block;
        let sub = u64::from(self.register_sub_partitions);
        let assumed = per_warp * warps_per_block.div_ceil(sub) * sub;
        let file = u64::from(self.registers_per_block);
        if file < assumed || file < per_block || launch.registers > self.max_registers_per_thread {
            return 0;
        }
        if per_warp == 0 {
            return UNLIMITED;
        }
        let warps_per_sub = u64::from(self.registers_per_sm) / sub / per_warp;
        if warps_per_block == 0 {
            return UNLIMITED;
        }
        warps_per_sub * sub / warps_per_block
    }

    /// `cudaOccMaxBlocksPerSMSmemLimit`, the kernel opted in to the most dynamic shared
    /// memory it may use.
    fn blocks_by_shared_memory(&self, launch: &Launch) -> u64 {
        let reserved = u64::from(self.shared_reserved_per_block);
        let unit = u64::from(self.shared_allocation_unit);
        let optin = u64::from(self.shared_per_block_optin);
        let static_total = u64::from(launch.static_shared) + reserved;
        let dynamic = u64::from(launch.dynamic_shared);
        let allocated = (static_total + dynamic).div_ceil(unit) * unit;
        let max_dynamic = optin.saturating_sub(u64::from(launch.static_shared));
        // The opted-in limit applies when the kernel may use more than the default.
        let per_block = if static_total + max_dynamic > u64::from(self.shared_per_block) {
            optin
        } else {
            u64::from(self.shared_per_block)
        } + reserved;
        if dynamic > max_dynamic || allocated > per_block {
            return 0;
        }
        let preferred = match launch.carveout {
            None => self.carveout_for(u64::from(self.shared_per_sm)),
            Some(p) => {
                self.carveout_for(u64::from(p.min(100)) * u64::from(self.shared_per_sm) / 100)
            }
        };
        let Some(preferred) = preferred else {
            return 0;
        };
        let per_sm = if preferred >= allocated {
            preferred
        } else {
            match self.carveout_for(allocated) {
                Some(c) => c,
                None => return 0,
            }
        };
        per_sm.checked_div(allocated).unwrap_or(UNLIMITED)
    }
}

fn table() -> &'static [OccupancyLimits] {
    static TABLE: OnceLock<Vec<OccupancyLimits>> = OnceLock::new();
    TABLE.get_or_init(|| parse(include_str!("../data/occupancy.tsv")).expect("data/occupancy.tsv"))
}

/// Parses the data file: a header row `field sm_XX ... source`, then one row per field.
fn parse(text: &str) -> Result<Vec<OccupancyLimits>, String> {
    let mut rows = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header: Vec<&str> = rows.next().ok_or("no header row")?.split('\t').collect();
    let sms: Vec<u16> = header[1..header.len() - 1]
        .iter()
        .map(|h| {
            h.strip_prefix("sm_")
                .and_then(|n| n.parse().ok())
                .ok_or(format!("bad column `{h}`"))
        })
        .collect::<Result<_, _>>()?;
    let mut fields: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for row in rows {
        let cells: Vec<&str> = row.split('\t').collect();
        if cells.len() != header.len() {
            return Err(format!(
                "row `{}`: {} cells, want {}",
                cells[0],
                cells.len(),
                header.len()
            ));
        }
        fields.insert(cells[0], cells[1..cells.len() - 1].to_vec());
    }
    let cell = |name: &str, i: usize| -> Result<&str, String> {
        fields
            .get(name)
            .map(|v| v[i])
            .ok_or(format!("no row `{name}`"))
    };
    let num = |name: &str, i: usize| -> Result<u32, String> {
        let c = cell(name, i)?;
        c.parse().map_err(|_| format!("`{name}`: bad number `{c}`"))
    };
    sms.iter()
        .enumerate()
        .map(|(i, &sm)| {
            let carveouts = cell("shared_carveout_kib", i)?
                .split(',')
                .map(|k| k.parse::<u32>().map(|k| k * 1024))
                .collect::<Result<Vec<u32>, _>>()
                .map_err(|_| "`shared_carveout_kib`: bad list".to_string())?;
            let barrier = cell("barrier_factor", i)?;
            Ok(OccupancyLimits {
                sm,
                warp_size: num("warp_size", i)?,
                max_threads_per_block: num("max_threads_per_block", i)?,
                max_threads_per_sm: num("max_threads_per_sm", i)?,
                max_blocks_per_sm: num("max_blocks_per_sm", i)?,
                registers_per_sm: num("registers_per_sm", i)?,
                registers_per_block: num("registers_per_block", i)?,
                max_registers_per_thread: num("max_registers_per_thread", i)?,
                register_allocation_unit: num("register_allocation_unit", i)?,
                register_sub_partitions: num("register_sub_partitions", i)?,
                shared_per_sm: num("shared_per_sm", i)?,
                shared_per_block: num("shared_per_block", i)?,
                shared_per_block_optin: num("shared_per_block_optin", i)?,
                shared_reserved_per_block: num("shared_reserved_per_block", i)?,
                shared_allocation_unit: num("shared_allocation_unit", i)?,
                shared_carveouts: carveouts,
                barrier_factor: match barrier {
                    "-" => None,
                    n => Some(n.parse().map_err(|_| format!("`barrier_factor`: `{n}`"))?),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    #[test]
    fn every_profile_has_limits() {
        for p in Profile::all() {
            let l = p.occupancy_limits();
            assert_eq!(l.sm, p.number);
            assert_eq!(
                l.shared_carveouts.last().copied(),
                Some(l.shared_per_sm),
                "{}: the largest carveout is the SM's shared memory",
                p.name()
            );
            assert_eq!(
                l.shared_per_block_optin + l.shared_reserved_per_block,
                l.shared_per_sm,
                "{}",
                p.name()
            );
        }
        assert_eq!(OccupancyLimits::all().len(), Profile::all().len());
    }

    /// kiln's function against the committed sample of cuda_occupancy.h's answers
    /// (`cargo xtask occupancy-check` compares the whole grid where the toolkit is installed).
    #[test]
    fn equals_the_cuda_occupancy_calculator_sample() {
        let text = include_str!("../data/occupancy-sample.tsv");
        let mut rows = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
            let v: Vec<i64> = line.split('\t').map(|c| c.parse().unwrap()).collect();
            let limits = OccupancyLimits::of(v[0] as u32).unwrap();
            let launch = Launch {
                registers: v[1] as u32,
                threads: v[2] as u32,
                static_shared: v[3] as u32,
                dynamic_shared: v[4] as u32,
                carveout: u8::try_from(v[5]).ok(),
                barriers: v[6] as u32,
            };
            let o = limits.occupancy(&launch);
            assert_eq!(
                (
                    i64::from(o.blocks),
                    i64::from(Limiter::cuda_bits(&o.limiters))
                ),
                (v[7], v[8]),
                "sm_{}: {launch:?}",
                v[0]
            );
            rows += 1;
        }
        assert!(rows > 1000, "{rows} rows");
    }

    #[test]
    fn occupancy_examples() {
        // sm_90, 32 registers, 256 threads: 8 blocks of 8 warps fill the SM.
        let sm90 = OccupancyLimits::of(90).unwrap();
        let o = sm90.occupancy(&Launch::new(32, 256, 4096, 1));
        assert_eq!(
            (o.blocks, o.warps, o.max_warps, o.percent()),
            (8, 64, 64, 100)
        );
        // 128 registers: 4 warps per sub-partition, 2 blocks of 8 warps.
        let o = sm90.occupancy(&Launch::new(128, 256, 0, 1));
        assert_eq!((o.blocks, o.percent()), (2, 25));
        assert_eq!(o.limiters, [Limiter::Registers]);
        // More threads than a block may have.
        assert_eq!(sm90.occupancy(&Launch::new(8, 2048, 0, 0)).blocks, 0);
    }
}
