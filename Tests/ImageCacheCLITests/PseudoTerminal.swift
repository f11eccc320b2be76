import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal pair of a given width, so a test sees the CLI as a person does: its
/// stderr a terminal (`isatty` true, `TIOCGWINSZ` answered), bars redrawn in place.
final class PseudoTerminal: @unchecked Sendable {
    /// The side the test reads (the terminal emulator's side).
    let primary: Int32
    /// The side given to the child as its stderr.
    let secondary: Int32
    private let lock = NSLock()
    private var secondaryOpen = true

    init(columns: Int) throws {
        // /dev/ptmx by hand: Glibc's module does not export posix_openpt/grantpt/unlockpt/ptsname
        // (they need _XOPEN_SOURCE). TIOCSPTLCK and TIOCGPTN are _IOW/_IOR('T', 0x31/0x30, int),
        // macros Swift cannot import; their values are the same on every Linux architecture we build for.
        let unlock: UInt = 0x4004_5431, number: UInt = 0x8004_5430
        let primary = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var locked: Int32 = 0
        var index: Int32 = -1
        guard primary >= 0, ioctl(primary, unlock, &locked) == 0, ioctl(primary, number, &index) == 0 else {
            if primary >= 0 { close(primary) }
            throw POSIXError(.ENODEV)
        }
        let secondary = open("/dev/pts/\(index)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard secondary >= 0 else {
            close(primary)
            throw POSIXError(.ENODEV)
        }
        var size = winsize(ws_row: 24, ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(secondary, UInt(TIOCSWINSZ), &size)
        // Raw output: no "\n" → "\r\n" translation, so the test reads the bytes as written.
        var modes = termios()
        tcgetattr(secondary, &modes)
        modes.c_oflag &= ~tcflag_t(OPOST)
        tcsetattr(secondary, TCSANOW, &modes)
        self.primary = primary
        self.secondary = secondary
    }

    /// Closes this process's copy of the child's side, once the child holds its own.
    func closeSecondary() {
        lock.lock(); defer { lock.unlock() }
        if secondaryOpen { close(secondary); secondaryOpen = false }
    }

    deinit {
        closeSecondary()
        close(primary)
    }
}
