//! Prints the size of every `ioctl.h` struct and the offset of every field, one per line:
//! `<c_struct_name> <size>` and `<c_struct_name>.<c_field_name> <offset>`, in the header's order.
//! The same format as the list a C program compiled against `ioctl.h` prints, so the two can
//! be compared with `diff`.

use std::io::Write;

fn main() {
    let mut out = std::io::stdout().lock();
    for (name, value) in tt_kmd_sys::LAYOUT {
        if writeln!(out, "{name} {value}").is_err() {
            return; // the reader went away (`| head`): nothing left to do
        }
    }
}
