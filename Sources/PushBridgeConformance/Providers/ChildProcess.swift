#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a child process in its own process group with a deadline, collecting its output.
///
/// A child that outlives the deadline is killed with its whole group (a shell and what it
/// started), so a hanging implementation under test never hangs the harness.
struct ChildProcess {
    struct Outcome {
        /// The exit status, when the child exited.
        var status: Int32?
        /// The signal that ended the child, when one did.
        var signal: Int32?
        var stdout: [UInt8]
        var stderr: [UInt8]
        var timedOut: Bool
    }

    /// Runs `arguments[0]` with `arguments` as its argv.
    /// - Parameters:
    ///   - arguments: the program path and its arguments.
    ///   - timeout: seconds before the group is killed.
    ///   - outputLimit: bytes kept per stream (the rest is read and dropped).
    static func run(_ arguments: [String], timeout: Double, outputLimit: Int = 16 << 20) throws -> Outcome {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw ChildProcessError(reason: "pipe failed: errno \(errno)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in [outPipe[0], outPipe[1], errPipe[0], errPipe[1]] { posix_spawn_file_actions_addclose(&actions, fd) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw ChildProcessError(reason: "could not start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }

        var out: [UInt8] = []
        var err: [UInt8] = []
        var open: [Int32: Bool] = [outPipe[0]: true, errPipe[0]: true]
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while open.values.contains(true) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                timedOut = true
                break
            }
            var fds = open.filter(\.value).map { pollfd(fd: $0.key, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 1000)) + 1)
            if ready < 0 && errno != EINTR { break }
            for p in fds where p.revents != 0 {
                let n = read(p.fd, &buffer, buffer.count)
                if n <= 0 {
                    open[p.fd] = false
                    continue
                }
                if p.fd == outPipe[0] {
                    if out.count < outputLimit { out += buffer[0..<min(n, outputLimit - out.count)] }
                } else if err.count < outputLimit {
                    err += buffer[0..<min(n, outputLimit - err.count)]
                }
            }
        }
        if timedOut { kill(-pid, SIGKILL) }
        close(outPipe[0])
        close(errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if !timedOut { kill(-pid, SIGKILL) }  // anything the child left behind in its group
        let exited = status & 0x7f == 0
        return Outcome(
            status: exited ? (status >> 8) & 0xff : nil, signal: exited ? nil : status & 0x7f, stdout: out, stderr: err, timedOut: timedOut)
    }
}

/// The harness could not run the implementation under test.
struct ChildProcessError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
