//! EIATTR records (`.nv.info`, `.nv.info.<f>`) and `.nv.compat` records.
//!
//! Both sections hold a flat list of TLV records: `format:u8, code:u8` followed by
//!
//! * `EIFMT_NVAL` (1): nothing — a flag; the two following bytes are zero.
//! * `EIFMT_BVAL` (2): one byte value in the next two bytes (`u16` little endian).
//! * `EIFMT_HVAL` (3): a 16-bit value in the next two bytes.
//! * `EIFMT_SVAL` (4): a `u16` payload size, then that many payload bytes.
//!
//! (ptxas's own numbering, checked with `cuobjdump -elf`; the seed notes' format table is
//! off by one.) Attribute names come from [`EIATTR_NAMES`], which was produced by probing
//! `cuobjdump -elf` 13.0.88 with every code (`cargo xtask cubin-names`).
//!
//! A record keeps its raw form ([`Record`]) so that codes and layouts we do not understand are
//! rewritten exactly; [`Record::value`] decodes the payload into a typed [`AttrValue`] and
//! [`Record::from_value`] encodes one back.

use crate::Error;

/// The record format byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// 1: no value.
    Nval,
    /// 2: a byte value.
    Bval,
    /// 3: a 16-bit value.
    Hval,
    /// 4: a sized payload.
    Sval,
    /// Any other byte (cuobjdump rejects these; we keep them to report them).
    Other(u8),
}

impl Format {
    pub fn from_byte(b: u8) -> Format {
        match b {
            1 => Format::Nval,
            2 => Format::Bval,
            3 => Format::Hval,
            4 => Format::Sval,
            o => Format::Other(o),
        }
    }
    pub fn byte(self) -> u8 {
        match self {
            Format::Nval => 1,
            Format::Bval => 2,
            Format::Hval => 3,
            Format::Sval => 4,
            Format::Other(o) => o,
        }
    }
    /// cuobjdump's name for the format.
    pub fn name(self) -> &'static str {
        match self {
            Format::Nval => "EIFMT_NVAL",
            Format::Bval => "EIFMT_BVAL",
            Format::Hval => "EIFMT_HVAL",
            Format::Sval => "EIFMT_SVAL",
            Format::Other(_) => "EIFMT_UNKNOWN",
        }
    }
}

/// One TLV record as stored: format, code, the 16-bit field (value for BVAL/HVAL, payload size
/// for SVAL) and the SVAL payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub format: Format,
    pub code: u8,
    /// For NVAL/BVAL/HVAL: the value field; for SVAL: ignored on write (the payload length is
    /// written) and equal to `payload.len()` on read.
    pub half: u16,
    pub payload: Vec<u8>,
}

/// Parses a `.nv.info`/`.nv.compat` section body into records.
pub fn parse_records(data: &[u8], section: &str) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let Some(head) = data.get(pos..pos + 4) else {
            return Err(Error::new(format!(
                "{section}: truncated attribute record header at offset {pos:#x}"
            )));
        };
        let format = Format::from_byte(head[0]);
        let code = head[1];
        let half = u16::from_le_bytes([head[2], head[3]]);
        pos += 4;
        let payload = if format == Format::Sval {
            let n = usize::from(half);
            let Some(p) = data.get(pos..pos + n) else {
                return Err(Error::new(format!(
                    "{section}: attribute record at offset {:#x} claims {n} payload bytes, only {} left",
                    pos - 4,
                    data.len() - pos
                )));
            };
            pos += n;
            p.to_vec()
        } else if let Format::Other(b) = format {
            return Err(Error::new(format!(
                "{section}: unknown attribute format {b:#x} at offset {:#x}",
                pos - 4
            )));
        } else {
            Vec::new()
        };
        out.push(Record {
            format,
            code,
            half,
            payload,
        });
    }
    Ok(out)
}

/// Encodes records back into section bytes.
pub fn encode_records(records: &[Record], out: &mut Vec<u8>) {
    for r in records {
        out.push(r.format.byte());
        out.push(r.code);
        if r.format == Format::Sval {
            out.extend_from_slice(&(r.payload.len() as u16).to_le_bytes());
            out.extend_from_slice(&r.payload);
        } else {
            out.extend_from_slice(&r.half.to_le_bytes());
        }
    }
}

/// EIATTR names by code as `cuobjdump -elf` 13.0.88 prints them (codes 0x00..=0x6f; `None`
/// where cuobjdump prints `unknown Attribute`). Produced and checked by
/// `cargo xtask cubin-names [--print]`, which patches one record of a real cubin to each code
/// and reads cuobjdump's listing.
pub const EIATTR_NAMES: [Option<&str>; 0x70] = [
    Some("EIATTR_ERROR"),
    Some("EIATTR_PAD"),
    Some("EIATTR_IMAGE_SLOT"),
    Some("EIATTR_JUMPTABLE_RELOCS"),
    Some("EIATTR_CTAIDZ_USED"),
    Some("EIATTR_MAX_THREADS"),
    Some("EIATTR_IMAGE_OFFSET"),
    Some("EIATTR_IMAGE_SIZE"),
    Some("EIATTR_TEXTURE_NORMALIZED"),
    Some("EIATTR_SAMPLER_INIT"),
    Some("EIATTR_PARAM_CBANK"),
    Some("EIATTR_SMEM_PARAM_OFFSETS"),
    Some("EIATTR_CBANK_PARAM_OFFSETS"),
    Some("EIATTR_SYNC_STACK"),
    Some("EIATTR_TEXID_SAMPID_MAP"),
    Some("EIATTR_EXTERNS"),
    Some("EIATTR_REQNTID"),
    Some("EIATTR_FRAME_SIZE"),
    Some("EIATTR_MIN_STACK_SIZE"),
    Some("EIATTR_SAMPLER_FORCE_UNNORMALIZED"),
    Some("EIATTR_BINDLESS_IMAGE_OFFSETS"),
    Some("EIATTR_BINDLESS_TEXTURE_BANK"),
    Some("EIATTR_BINDLESS_SURFACE_BANK"),
    Some("EIATTR_KPARAM_INFO"),
    Some("EIATTR_SMEM_PARAM_SIZE"),
    Some("EIATTR_CBANK_PARAM_SIZE"),
    Some("EIATTR_QUERY_NUMATTRIB"),
    Some("EIATTR_MAXREG_COUNT"),
    Some("EIATTR_EXIT_INSTR_OFFSETS"),
    Some("EIATTR_S2RCTAID_INSTR_OFFSETS"),
    Some("EIATTR_CRS_STACK_SIZE"),
    Some("EIATTR_NEED_CNP_WRAPPER"),
    Some("EIATTR_NEED_CNP_PATCH"),
    Some("EIATTR_EXPLICIT_CACHING"),
    Some("EIATTR_ISTYPEP_USED"),
    Some("EIATTR_MAX_STACK_SIZE"),
    Some("EIATTR_SUQ_USED"),
    Some("EIATTR_LD_CACHEMOD_INSTR_OFFSETS"),
    Some("EIATTR_LOAD_CACHE_REQUEST"),
    Some("EIATTR_ATOM_SYS_INSTR_OFFSETS"),
    Some("EIATTR_COOP_GROUP_INSTR_OFFSETS"),
    Some("EIATTR_COOP_GROUP_MASK_REGIDS"),
    Some("EIATTR_SW1850030_WAR"),
    Some("EIATTR_WMMA_USED"),
    Some("EIATTR_HAS_PRE_V10_OBJECT"),
    Some("EIATTR_ATOMF16_EMUL_INSTR_OFFSETS"),
    Some("EIATTR_ATOM16_EMUL_INSTR_REG_MAP"),
    Some("EIATTR_REGCOUNT"),
    Some("EIATTR_SW2393858_WAR"),
    Some("EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"),
    Some("EIATTR_SHARED_SCRATCH"),
    Some("EIATTR_STATISTICS"),
    Some("EIATTR_INDIRECT_BRANCH_TARGETS"),
    Some("EIATTR_SW2861232_WAR"),
    Some("EIATTR_SW_WAR"),
    Some("EIATTR_CUDA_API_VERSION"),
    Some("EIATTR_NUM_MBARRIERS"),
    Some("EIATTR_MBARRIER_INSTR_OFFSETS"),
    Some("EIATTR_COROUTINE_RESUME_ID_OFFSETS"),
    Some("EIATTR_SAM_REGION_STACK_SIZE"),
    Some("EIATTR_PER_REG_TARGET_PERF_STATS"),
    Some("EIATTR_CTA_PER_CLUSTER"),
    Some("EIATTR_EXPLICIT_CLUSTER"),
    Some("EIATTR_MAX_CLUSTER_RANK"),
    Some("EIATTR_INSTR_REG_MAP"),
    Some("EIATTR_RESERVED_SMEM_USED"),
    Some("EIATTR_RESERVED_SMEM_0_SIZE"),
    Some("EIATTR_UCODE_SECTION_DATA"),
    Some("EIATTR_UNUSED_LOAD_BYTE_OFFSET"),
    Some("EIATTR_KPARAM_INFO_V2"),
    Some("EIATTR_SYSCALL_OFFSETS"),
    Some("EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS"),
    Some("EIATTR_GRAPHICS_GLOBAL_CBANK"),
    Some("EIATTR_SHADER_TYPE"),
    Some("EIATTR_VRC_CTA_INIT_COUNT"),
    Some("EIATTR_TOOLS_PATCH_FUNC"),
    Some("EIATTR_NUM_BARRIERS"),
    Some("EIATTR_TEXMODE_INDEPENDENT"),
    Some("EIATTR_PERF_STATISTICS"),
    Some("EIATTR_AT_ENTRY_FRAGMENTS"),
    Some("EIATTR_SPARSE_MMA_MASK"),
    Some("EIATTR_TCGEN05_1CTA_USED"),
    Some("EIATTR_TCGEN05_2CTA_USED"),
    Some("EIATTR_GEN_ERRBAR_AT_EXIT"),
    Some("EIATTR_REG_RECONFIG"),
    Some("EIATTR_ANNOTATIONS"),
    None,
    Some("EIATTR_STACK_CANARY_TRAP_OFFSETS"),
    Some("EIATTR_STUB_FUNCTION_KIND"),
    Some("EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS"),
    Some("EIATTR_MERCURY_FINALIZER_OPTIONS"),
    Some("EIATTR_BLOCKS_ARE_CLUSTERS"),
    Some("EIATTR_SANITIZE"),
    Some("EIATTR_SYSCALLS_FALLBACK"),
    Some("EIATTR_CUDA_REQ"),
    Some("EIATTR_MERCURY_ISA_VERSION"),
    None,
    Some("EIATTR_RTCORE_ENTRY"),
    Some("EIATTR_CLUSTER_LAUNCH_CONTROL_USED"),
    None,
    Some("EIATTR_MIN_PER_CTA_MEMORY_SIZE"),
    Some("EIATTR_IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS"),
    Some("EIATTR_LANGUAGE"),
    None,
    None,
    None,
    None,
    Some("EIATTR_NVSAL_SW_WAR"),
    None,
    None,
    None,
    None,
];

/// cuobjdump's name for an EIATTR code (`unknown Attribute` when it has none).
pub fn attr_name(code: u8) -> &'static str {
    EIATTR_NAMES
        .get(usize::from(code))
        .copied()
        .flatten()
        .unwrap_or("unknown Attribute")
}

/// Codes of the EIATTR attributes used by name in this crate.
pub mod code {
    pub const CTAIDZ_USED: u8 = 0x04;
    pub const MAX_THREADS: u8 = 0x05;
    pub const PARAM_CBANK: u8 = 0x0a;
    pub const EXTERNS: u8 = 0x0f;
    pub const REQNTID: u8 = 0x10;
    pub const FRAME_SIZE: u8 = 0x11;
    pub const MIN_STACK_SIZE: u8 = 0x12;
    pub const BINDLESS_TEXTURE_BANK: u8 = 0x15;
    pub const BINDLESS_SURFACE_BANK: u8 = 0x16;
    pub const KPARAM_INFO: u8 = 0x17;
    pub const CBANK_PARAM_SIZE: u8 = 0x19;
    pub const MAXREG_COUNT: u8 = 0x1b;
    pub const EXIT_INSTR_OFFSETS: u8 = 0x1c;
    pub const S2RCTAID_INSTR_OFFSETS: u8 = 0x1d;
    pub const CRS_STACK_SIZE: u8 = 0x1e;
    pub const MAX_STACK_SIZE: u8 = 0x23;
    pub const MBARRIER_INSTR_OFFSETS: u8 = 0x39;
    pub const KPARAM_INFO_V2: u8 = 0x45;
    pub const SYSCALL_OFFSETS: u8 = 0x46;
    pub const COOP_GROUP_INSTR_OFFSETS: u8 = 0x28;
    pub const COOP_GROUP_MASK_REGIDS: u8 = 0x29;
    pub const WMMA_USED: u8 = 0x2b;
    pub const REGCOUNT: u8 = 0x2f;
    pub const INT_WARP_WIDE_INSTR_OFFSETS: u8 = 0x31;
    pub const INDIRECT_BRANCH_TARGETS: u8 = 0x34;
    pub const SW2861232_WAR: u8 = 0x35;
    pub const SW_WAR: u8 = 0x36;
    pub const CUDA_API_VERSION: u8 = 0x37;
    pub const NUM_MBARRIERS: u8 = 0x38;
    pub const SAM_REGION_STACK_SIZE: u8 = 0x3b;
    pub const CTA_PER_CLUSTER: u8 = 0x3d;
    pub const EXPLICIT_CLUSTER: u8 = 0x3e;
    pub const MAX_CLUSTER_RANK: u8 = 0x3f;
    pub const VRC_CTA_INIT_COUNT: u8 = 0x4a;
    pub const NUM_BARRIERS: u8 = 0x4c;
    pub const RESERVED_SMEM_USED: u8 = 0x41;
    pub const SPARSE_MMA_MASK: u8 = 0x50;
    pub const ANNOTATIONS: u8 = 0x55;
    pub const BLOCKS_ARE_CLUSTERS: u8 = 0x5b;
    pub const MERCURY_ISA_VERSION: u8 = 0x5f;
}

/// One parameter's entry in `EIATTR_KPARAM_INFO` (12-byte payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KparamInfo {
    /// Word 0 (cuobjdump's `Index`), zero in ptxas output.
    pub index: u32,
    /// Parameter ordinal (0-based).
    pub ordinal: u16,
    /// Byte offset of the parameter inside the parameter block.
    pub offset: u16,
    /// Low byte of the flags word: `Pointee's logAlignment` (bits 0..8).
    pub log_align: u8,
    /// Bits 8..12 of the flags word: `Space`.
    pub space: u8,
    /// Bits 12..17: `cbank` (0x1f: the parameter constant bank).
    pub cbank: u8,
    /// Bit 17: clear for every parameter ptxas 13.0.88 writes (cuobjdump prints
    /// `Parameter Space : CBANK` for them); we print `SMEM` when set (not observed).
    pub in_smem: bool,
    /// Bits 18..32: parameter size in bytes.
    pub size: u16,
}

impl KparamInfo {
    fn decode(p: &[u8]) -> Option<KparamInfo> {
        if p.len() != 12 {
            return None;
        }
        let index = u32::from_le_bytes(p[0..4].try_into().ok()?);
        let ordinal = u16::from_le_bytes([p[4], p[5]]);
        let offset = u16::from_le_bytes([p[6], p[7]]);
        let flags = u32::from_le_bytes(p[8..12].try_into().ok()?);
        let k = KparamInfo {
            index,
            ordinal,
            offset,
            log_align: (flags & 0xff) as u8,
            space: ((flags >> 8) & 0xf) as u8,
            cbank: ((flags >> 12) & 0x1f) as u8,
            in_smem: (flags >> 17) & 1 == 1,
            size: (flags >> 18) as u16,
        };
        // Only accept layouts that re-encode to the same bytes.
        (k.encode() == p).then_some(k)
    }
    fn encode(&self) -> Vec<u8> {
        let flags = u32::from(self.log_align)
            | (u32::from(self.space & 0xf) << 8)
            | (u32::from(self.cbank & 0x1f) << 12)
            | (u32::from(self.in_smem) << 17)
            | (u32::from(self.size & 0x3fff) << 18);
        let mut v = Vec::with_capacity(12);
        v.extend_from_slice(&self.index.to_le_bytes());
        v.extend_from_slice(&self.ordinal.to_le_bytes());
        v.extend_from_slice(&self.offset.to_le_bytes());
        v.extend_from_slice(&flags.to_le_bytes());
        v
    }
}

/// A decoded EIATTR value. Every variant encodes back to the exact record it came from;
/// payloads that do not fit the expected shape stay [`AttrValue::Raw`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// NVAL flag attributes (CTAIDZ_USED, WMMA_USED, ...).
    Flag,
    /// BVAL/HVAL attributes with a plain number (MAXREG_COUNT, CBANK_PARAM_SIZE, NUM_BARRIERS,
    /// SPARSE_MMA_MASK, VRC_CTA_INIT_COUNT, ...).
    Half(u16),
    /// MERCURY_ISA_VERSION (HVAL): major in the low byte, minor in the high byte.
    MercuryIsaVersion { major: u8, minor: u8 },
    /// REGCOUNT / FRAME_SIZE / MIN_STACK_SIZE / MAX_STACK_SIZE / SAM_REGION_STACK_SIZE: a
    /// function symbol index and a value.
    PerFunction { function: u32, value: u32 },
    /// PARAM_CBANK: the `.nv.constant0.<f>` section symbol, parameter block offset and size.
    ParamCbank { symbol: u32, offset: u16, size: u16 },
    /// KPARAM_INFO.
    KparamInfo(KparamInfo),
    /// MAX_THREADS / REQNTID / CTA_PER_CLUSTER / EXPLICIT_CLUSTER (three dimensions).
    Dim3([u32; 3]),
    /// Lists of 32-bit words: instruction offsets (EXIT, S2RCTAID, COOP_GROUP, ...),
    /// COOP_GROUP_MASK_REGIDS, CRS_STACK_SIZE, CUDA_API_VERSION, SW_WAR, ....
    Words(Vec<u32>),
    /// Anything else, kept byte for byte.
    Raw(Vec<u8>),
}

fn words(p: &[u8]) -> Option<Vec<u32>> {
    if !p.len().is_multiple_of(4) {
        return None;
    }
    Some(
        p.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

impl Record {
    /// The typed value of this record.
    pub fn value(&self) -> AttrValue {
        match self.format {
            Format::Nval if self.half == 0 => AttrValue::Flag,
            Format::Nval | Format::Other(_) => AttrValue::Raw(self.half.to_le_bytes().to_vec()),
            Format::Hval if self.code == code::MERCURY_ISA_VERSION => {
                AttrValue::MercuryIsaVersion {
                    major: (self.half & 0xff) as u8,
                    minor: (self.half >> 8) as u8,
                }
            }
            Format::Bval | Format::Hval => AttrValue::Half(self.half),
            Format::Sval => self.sval_value(),
        }
    }

    fn sval_value(&self) -> AttrValue {
        let p = &self.payload;
        let typed = match self.code {
            code::REGCOUNT
            | code::FRAME_SIZE
            | code::MIN_STACK_SIZE
            | code::MAX_STACK_SIZE
            | code::SAM_REGION_STACK_SIZE
                if p.len() == 8 =>
            {
                words(p).map(|w| AttrValue::PerFunction {
                    function: w[0],
                    value: w[1],
                })
            }
            code::PARAM_CBANK if p.len() == 8 => Some(AttrValue::ParamCbank {
                symbol: u32::from_le_bytes([p[0], p[1], p[2], p[3]]),
                offset: u16::from_le_bytes([p[4], p[5]]),
                size: u16::from_le_bytes([p[6], p[7]]),
            }),
            code::KPARAM_INFO => KparamInfo::decode(p).map(AttrValue::KparamInfo),
            code::MAX_THREADS | code::REQNTID | code::CTA_PER_CLUSTER | code::EXPLICIT_CLUSTER
                if p.len() == 12 =>
            {
                words(p).map(|w| AttrValue::Dim3([w[0], w[1], w[2]]))
            }
            _ => words(p).map(AttrValue::Words),
        };
        typed.unwrap_or_else(|| AttrValue::Raw(p.clone()))
    }

    /// Builds a record from a code, format and typed value.
    pub fn from_value(code: u8, format: Format, value: &AttrValue) -> Record {
        let mut half = 0u16;
        let mut payload = Vec::new();
        match value {
            AttrValue::Flag => {}
            AttrValue::Half(h) => half = *h,
            AttrValue::MercuryIsaVersion { major, minor } => {
                half = u16::from(*major) | (u16::from(*minor) << 8)
            }
            AttrValue::PerFunction { function, value } => {
                payload.extend_from_slice(&function.to_le_bytes());
                payload.extend_from_slice(&value.to_le_bytes());
            }
            AttrValue::ParamCbank {
                symbol,
                offset,
                size,
            } => {
                payload.extend_from_slice(&symbol.to_le_bytes());
                payload.extend_from_slice(&offset.to_le_bytes());
                payload.extend_from_slice(&size.to_le_bytes());
            }
            AttrValue::KparamInfo(k) => payload = k.encode(),
            AttrValue::Dim3(d) => d
                .iter()
                .for_each(|w| payload.extend_from_slice(&w.to_le_bytes())),
            AttrValue::Words(ws) => ws
                .iter()
                .for_each(|w| payload.extend_from_slice(&w.to_le_bytes())),
            AttrValue::Raw(r) => {
                if format == Format::Sval {
                    payload = r.clone()
                } else if r.len() == 2 {
                    half = u16::from_le_bytes([r[0], r[1]])
                }
            }
        }
        if format == Format::Sval {
            half = payload.len() as u16;
        }
        Record {
            format,
            code,
            half,
            payload,
        }
    }
}

/// `.nv.compat` record names by code as `cuobjdump -elf` 13.0.88 prints them (codes
/// 0x00..=0x0c; higher codes print `unknown Attribute`). Produced and checked by
/// `cargo xtask cubin-names`, like [`EIATTR_NAMES`].
pub const COMPAT_NAMES: [&str; 0x0d] = [
    "EICOMPAT_ATTR_ERROR",
    "EICOMPAT_ATTR_PAD",
    "EICOMPAT_ATTR_ISA_CLASS",
    "EICOMPAT_ATTR_INST_TENSORMAP_V1",
    "EICOMPAT_ATTR_INST_TCGEN05_MMA_DEPRECATED",
    "EICOMPAT_ATTR_INST_TCGEN05_MMA",
    "EICOMPAT_ATTR_ENABLE_OPPORTUNISTIC_FINALIZATION",
    "EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION",
    "EICOMPAT_ATTR_MERCURY_ISA_PATCH_VERSION",
    "EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET",
    "EICOMPAT_ATTR_CUDA_DRIVER_VERSION",
    "EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE",
    "EICOMPAT_ATTR_ERROR_LAST",
];

/// cuobjdump's name for a `.nv.compat` code (`None`: `unknown Attribute`).
pub fn compat_name(code: u8) -> Option<&'static str> {
    COMPAT_NAMES.get(usize::from(code)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_typed() {
        // Bytes of a ptxas 13.0.88 sm_100 `.nv.info.call_rnd` KPARAM_INFO and PARAM_CBANK.
        let bytes = [
            0x04, 0x17, 0x0c, 0x00, 0, 0, 0, 0, 1, 0, 8, 0, 0x00, 0xf0, 0x21, 0x00, //
            0x04, 0x0a, 0x08, 0x00, 0x0e, 0, 0, 0, 0x80, 0x03, 0x10, 0x00, //
            0x03, 0x5f, 0x01, 0x01, 0x01, 0x2b, 0x00, 0x00,
        ];
        let recs = parse_records(&bytes, "t").unwrap();
        let vals: Vec<_> = recs.iter().map(Record::value).collect();
        assert_eq!(
            vals[1],
            AttrValue::ParamCbank {
                symbol: 0xe,
                offset: 0x380,
                size: 0x10
            }
        );
        match &vals[0] {
            AttrValue::KparamInfo(k) => {
                assert_eq!((k.ordinal, k.offset, k.size, k.cbank), (1, 8, 8, 0x1f));
                assert!(!k.in_smem);
            }
            v => panic!("{v:?}"),
        }
        assert_eq!(vals[2], AttrValue::MercuryIsaVersion { major: 1, minor: 1 });
        assert_eq!(vals[3], AttrValue::Flag);
        let mut out = Vec::new();
        let rebuilt: Vec<_> = recs
            .iter()
            .zip(&vals)
            .map(|(r, v)| Record::from_value(r.code, r.format, v))
            .collect();
        encode_records(&rebuilt, &mut out);
        assert_eq!(out, bytes);
    }

    #[test]
    fn truncated_is_an_error() {
        assert!(parse_records(&[4, 0x17, 12, 0, 1, 2], "s").is_err());
        assert!(parse_records(&[4, 0x17], "s").is_err());
        assert!(parse_records(&[9, 0x17, 0, 0], "s").is_err());
    }
}
