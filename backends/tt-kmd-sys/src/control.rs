//! The structs of the ioctls that act on the device and on what happens when the fd goes:
//! RESET_DEVICE, LOCK_CTL (the device's resource locks), SET_NOC_CLEANUP (a NoC write at
//! release) and SET_POWER_STATE (this fd's power request).

use crate::consts::POWER_SETTINGS_COUNT;
use crate::size::size_u32;

/// RESET_DEVICE input.
#[doc(alias = "tenstorrent_reset_device_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResetDeviceIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<ResetDeviceOut>()`.
    pub output_size_bytes: u32,
    /// One of the `RESET_DEVICE_*` values (not a bit set).
    pub flags: u32,
}

impl Default for ResetDeviceIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<ResetDeviceOut>(),
            flags: 0,
        }
    }
}

/// RESET_DEVICE output.
#[doc(alias = "tenstorrent_reset_device_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResetDeviceOut {
    /// The kernel's full size of this struct.
    pub output_size_bytes: u32,
    /// 0 on success.
    pub result: u32,
}

/// RESET_DEVICE (`output_size_bytes` convention). A destructive reset makes every other fd of
/// the device answer `ENODEV` and every old mapping fault (`SIGBUS`).
#[doc(alias = "tenstorrent_reset_device")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResetDevice {
    /// C `in`.
    pub input: ResetDeviceIn,
    /// C `out`.
    pub output: ResetDeviceOut,
}

/// LOCK_CTL input.
#[doc(alias = "tenstorrent_lock_ctl_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockCtlIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<LockCtlOut>()`.
    pub output_size_bytes: u32,
    /// One of the `LOCK_CTL_*` values.
    pub flags: u32,
    /// The lock, below [`RESOURCE_LOCK_COUNT`](crate::RESOURCE_LOCK_COUNT).
    pub index: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

impl Default for LockCtlIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<LockCtlOut>(),
            flags: 0,
            index: 0,
            reserved: [0; 3],
        }
    }
}

/// LOCK_CTL output.
#[doc(alias = "tenstorrent_lock_ctl_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockCtlOut {
    /// The result; see the `LOCK_CTL_*` flags.
    pub value: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

/// LOCK_CTL (`output_size_bytes` convention). Locks are released when the fd closes.
#[doc(alias = "tenstorrent_lock_ctl")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockCtl {
    /// C `in`.
    pub input: LockCtlIn,
    /// C `out`.
    pub output: LockCtlOut,
}

/// SET_NOC_CLEANUP (`argsz` convention, tt-kmd 2.2.0+): a NoC write32 the driver performs when
/// the fd is released, so device-side state is cleaned up even if the process dies.
#[doc(alias = "tenstorrent_set_noc_cleanup")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SetNocCleanup {
    /// Must be `size_of::<SetNocCleanup>()` (32).
    pub argsz: u32,
    /// Must be 0.
    pub flags: u32,
    /// 1 = register the action, 0 = clear it.
    pub enabled: u8,
    /// Target tile x (at most 64).
    pub x: u8,
    /// Target tile y (at most 64).
    pub y: u8,
    /// 0 or 1.
    pub noc: u8,
    /// Reserved.
    pub reserved0: u32,
    /// NoC address, 4-byte aligned.
    pub addr: u64,
    /// The value; the upper 32 bits are ignored.
    pub data: u64,
}

impl Default for SetNocCleanup {
    fn default() -> Self {
        Self {
            argsz: size_u32::<Self>(),
            flags: 0,
            enabled: 0,
            x: 0,
            y: 0,
            noc: 0,
            reserved0: 0,
            addr: 0,
            data: 0,
        }
    }
}

/// SET_POWER_STATE (`argsz` convention, tt-kmd 2.6.0+). The driver ORs the flags of every fd
/// (flags past the fd's `validity` count as on) and takes the maximum of each setting, then
/// tells the firmware.
#[doc(alias = "tenstorrent_power_state")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PowerState {
    /// Must be `size_of::<PowerState>()` (40).
    pub argsz: u32,
    /// Must be 0.
    pub flags: u32,
    /// Must be 0.
    pub reserved0: u8,
    /// [`power_validity`](crate::power_validity)`(flags, settings)`: how many flags and settings
    /// are meant.
    pub validity: u8,
    /// `POWER_FLAG_*` bits.
    pub power_flags: u16,
    /// Numeric settings.
    pub power_settings: [u16; POWER_SETTINGS_COUNT],
}

impl Default for PowerState {
    fn default() -> Self {
        Self {
            argsz: size_u32::<Self>(),
            flags: 0,
            reserved0: 0,
            validity: 0,
            power_flags: 0,
            power_settings: [0; POWER_SETTINGS_COUNT],
        }
    }
}
