//! A card with a fused DRAM bank, over the simulated card: the host reads the bank from ARC
//! telemetry (tag 36), the window plan gives it no window, every access to it is refused with
//! the bank named, the translation is the ARC firmware's for it, and the loader tells the
//! firmware; telemetry with two banks off, or without the tag, as tt-umd reads it.

use blackhole_pac::arc::tag;
use blackhole_pac::harvest::{DramBanks, DramHarvestError, HarvestMask};
use blackhole_pac::tlb::TlbSize;
use blackhole_pac::translate::Translation;
use komorebi_kernel::abi;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::firmware::{self, BootOptions, Firmware};
use komorebi_pcie::sim::{SimBar, SimBarOptions, SimWindow};
use komorebi_pcie::{Bar, Mapping, PcieError};
use komorebi_sim::{Boot, Sim, SimConfig};

mod common;

use common::{Read, Tap, Tapped};

fn sim(fused_dram: Option<u8>) -> Sim {
    Sim::new(SimConfig {
        fused_dram,
        ..SimConfig::default()
    })
}

fn card(fused_dram: Option<u8>, options: SimBarOptions) -> Card<SimBar> {
    Card::open(
        SimBar::new(sim(fused_dram), options),
        CardOptions::default(),
    )
    .unwrap()
}

#[test]
fn the_window_plan_gives_seven_banks_a_window_and_the_fused_one_none() {
    for bank in 0..8u8 {
        let mut c = card(Some(bank), SimBarOptions::default());
        assert_eq!(c.fused_dram(), Some(bank));
        assert_eq!(c.dram_windows(), 7, "bank {bank} fused");
        // One of the eight 4 GiB windows is left: the plan never took one for the fused bank.
        let bar = c.bar_mut();
        let spare = bar
            .allocate(TlbSize::Size4G, Mapping::WriteCombined)
            .unwrap();
        let taken = bar
            .allocate(TlbSize::Size4G, Mapping::WriteCombined)
            .unwrap_err();
        assert!(
            matches!(taken, PcieError::WindowsExhausted { available: 8, .. }),
            "{taken:?}"
        );
        assert_eq!(
            taken.to_string(),
            "no free 4 GiB TLB window is left (the driver has 8 and all are allocated)"
        );
        let none = PcieError::WindowsExhausted {
            size: "4 GiB",
            available: 0,
        };
        assert_eq!(
            none.to_string(),
            "this device has no 4 GiB TLB window (tt-kmd has none of that size: a 4 GiB window \
             needs 4 GiB of BAR4, sysfs resource4)"
        );
        bar.free(spare).unwrap();
        // The translation is the ARC firmware's for this bank.
        assert_eq!(
            c.translation(),
            Some(&Translation::with_dram(HarvestMask::P100_P150, Some(bank)))
        );
        let mut buf = [0u8; 64];
        let e = c.read_dram(bank, 0x1000, &mut buf).unwrap_err();
        let banks = DramBanks::with_fused(Some(bank)).unwrap();
        assert_eq!(
            e,
            PcieError::FusedDram {
                what: format!("DRAM bank {bank} at 0x1000+64"),
                bank,
                banks,
            }
        );
        assert!(matches!(
            c.write_dram(bank, 0, &[1; 16]),
            Err(PcieError::FusedDram { .. })
        ));
        // Every working bank reads back what was written, through its own window.
        for other in banks.iter() {
            c.write_dram(other, 0x40, &[other; 32]).unwrap();
            c.read_dram(other, 0x40, &mut buf[..32]).unwrap();
            assert_eq!(buf[..32], [other; 32], "bank {other} with {bank} fused");
            let mut direct = [0u8; 32];
            c.bar_mut()
                .sim()
                .read_dram(other, 0x40, &mut direct)
                .unwrap();
            assert_eq!(direct, [other; 32], "bank {other} landed in bank {other}");
        }
    }
    let e = card(Some(5), SimBarOptions::default())
        .read_dram(5, 0x1000, &mut [0; 64])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "DRAM bank 5 at 0x1000+64: DRAM bank 5 is fused off on this chip (ARC telemetry \
         ENABLED_GDDR; its clock is off on a card); the chip has banks 0, 1, 2, 3, 4, 6, 7"
    );
}

#[test]
fn without_4_gib_windows_the_working_banks_go_through_the_spare_one_and_the_fused_is_refused() {
    let c = card(
        Some(2),
        SimBarOptions {
            windows_4g: 0,
            ..SimBarOptions::default()
        },
    );
    assert_eq!(c.dram_windows(), 0);
    assert!(matches!(
        c.read_dram(2, 0, &mut [0; 4]),
        Err(PcieError::FusedDram { bank: 2, .. })
    ));
    c.write_dram(3, 0x20_0000 - 8, &[7; 16]).unwrap();
    let mut b = [0u8; 16];
    c.read_dram(3, 0x20_0000 - 8, &mut b).unwrap();
    assert_eq!(b, [7; 16]);
}

#[test]
fn no_bank_fused_is_eight_windows_as_before() {
    let c = card(None, SimBarOptions::default());
    assert_eq!((c.fused_dram(), c.dram_windows()), (None, 8));
    assert_eq!(
        c.translation(),
        Some(&Translation::new(HarvestMask::P100_P150))
    );
}

#[test]
fn the_loader_writes_the_fused_bank_into_every_tile_s_chip_word() {
    let s = Sim::new(SimConfig {
        fused_dram: Some(6),
        boot: Boot::HeldInReset,
        ..SimConfig::default()
    });
    let mut c = Card::open(
        SimBar::new(s, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap();
    // Native images: the simulator only checks the header; nothing starts them, so the wait
    // times out, after every header is written.
    let _ = firmware::boot(
        &mut c,
        &Firmware::native(),
        |t| (t.x(), t.y()),
        BootOptions {
            timeout: std::time::Duration::from_micros(10),
            native_allowed: true,
        },
    );
    let want = abi::ChipWord {
        translated: true,
        fused_dram: Some(6),
    };
    for t in c.tensix().collect::<Vec<_>>() {
        let mut w = [0u8; 4];
        c.read_l1(t, abi::CONTROL_BASE + abi::HEADER_CHIP, &mut w)
            .unwrap();
        assert_eq!(abi::ChipWord::decode(u32::from_le_bytes(w)), Some(want));
    }
}

/// The simulated card's telemetry with its `ENABLED_GDDR` replaced: `Some(v)` reads `v`,
/// `None` leaves the tag out of the table (its entry names another tag).
struct Patched {
    enabled_gddr: Option<u32>,
}

impl Patched {
    fn new(enabled_gddr: Option<u32>) -> Tapped<Self> {
        Tapped::new(
            SimBar::new(sim(None), SimBarOptions::default()),
            Self { enabled_gddr },
        )
    }
}

impl Tap for Patched {
    fn read32(&self, read: Read<'_>) -> Option<Result<u32, PcieError>> {
        // Only windows onto ARC.
        let base = read
            .config
            .filter(|c| c.end == blackhole_pac::arc::ARC_XY)?
            .addr;
        Some(self.patch(read.card, read.window, base, read.offset))
    }
}

impl Patched {
    /// The word at `offset` of `window` (onto ARC at `base`), patched.
    fn patch(
        &self,
        card: &SimBar,
        window: &SimWindow,
        base: u64,
        offset: u64,
    ) -> Result<u32, PcieError> {
        let v = card.read32(window, offset)?;
        let (addr, table, data) = (
            base + offset,
            komorebi_sim::arc::TABLE_ADDR as u64,
            komorebi_sim::arc::DATA_ADDR as u64,
        );
        // The table and the data share one 2 MiB window; anything else is left alone.
        if addr < table || addr >= data + 0x1000 {
            return Ok(v);
        }
        let word = |a: u64| card.read32(window, a - base);
        let n = word(table + 4)? as u64;
        let is_gddr = |e: u32| e & 0xFFFF == tag::ENABLED_GDDR as u32;
        if (table + 8..table + 8 + 4 * n).contains(&addr) && is_gddr(v) {
            // Hidden: the entry names a tag no reader knows.
            return Ok(match self.enabled_gddr {
                Some(_) => v,
                None => v & !0xFFFF | 0xFFFE,
            });
        }
        for i in 0..n {
            let e = word(table + 8 + 4 * i)?;
            if is_gddr(e) && addr == data + 4 * (e >> 16) as u64 {
                return Ok(self.enabled_gddr.unwrap_or(v));
            }
        }
        Ok(v)
    }
}

#[test]
fn telemetry_with_two_banks_off_is_refused_and_a_missing_tag_means_none() {
    let two = Card::open(
        Patched::new(Some(0xFF & !0b1000_0010)),
        CardOptions::default(),
    );
    let e = two.map(|_| ()).unwrap_err();
    assert_eq!(
        e,
        PcieError::DramHarvest(DramHarvestError::TooManyFused(0x7D))
    );
    assert_eq!(
        e.to_string(),
        "ARC telemetry (tag 36): ENABLED_GDDR 0x7d says DRAM banks 1, 7 are off; at most one \
         fused DRAM bank is supported (as tt-umd's coordinate manager and the ARC firmware's \
         NoC translation)"
    );
    let missing = Card::open(Patched::new(None), CardOptions::default()).unwrap();
    assert_eq!(missing.telemetry().get(tag::ENABLED_GDDR), None);
    assert_eq!((missing.fused_dram(), missing.dram_windows()), (None, 8));
    let one = Card::open(Patched::new(Some(0xF7)), CardOptions::default()).unwrap();
    assert_eq!(one.fused_dram(), Some(3));
    // Bits above the 8 banks are not banks (tt-umd masks them off).
    let high = Card::open(Patched::new(Some(0xFFFF_FF7F)), CardOptions::default()).unwrap();
    assert_eq!(high.fused_dram(), Some(7));
}
