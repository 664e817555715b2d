import Foundation
import PushBridgeCore
import PushBridgeJSON

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The implementation under test failed to give a decision: it crashed, timed out, exited
/// non-zero or could not be reached. The fixture fails with this reason; the harness goes on.
public struct ImplementationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension Fixture {
    /// Runs `body` with a path to a temporary file holding what an implementation under test is
    /// given (``bytes(profile:)``: the scenario without its answer). The fixture's own file is never
    /// passed: it holds `expect`.
    public func withFile<T>(profile: Profile?, _ body: (String) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-against-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        guard FileManager.default.createFile(atPath: file, contents: Data(bytes(profile: profile))) else {
            throw ImplementationFailure("could not write the temporary fixture \(file)")
        }
        return try body(file)
    }

    /// The keys of a fixture that reveal its answer, removed from what an implementation is given.
    public static let answerKeys = ["expect"]

    /// The scenario document as an implementation under test gets it: without `expect` (the
    /// answer), and with `profile` set when one is asked for.
    public func document(profile: Profile?) -> JSONValue {
        guard case .object(var object) = document else { return document }
        for key in Self.answerKeys { object[key] = nil }
        if let profile { object["profile"] = .string(profile.id) }
        return .object(object)
    }

    /// ``document(profile:)`` as compact JSON bytes: what an implementation under test is given.
    public func bytes(profile: Profile?) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(document(profile: profile))
        return writer.bytes
    }
}

/// An implementation under test run as a command: `CMD FILE` through `/bin/sh -c`, once per
/// fixture (and per profile of an equivalence fixture), with a deadline. Whatever it prints on
/// standard output is the decision JSON.
public struct CommandDecisionProvider: DecisionProvider {
    public let command: String
    /// Seconds per run before the command (and everything it started) is killed.
    public let timeout: Double

    /// - Parameters:
    ///   - command: a shell command; the fixture path is appended as its last argument.
    ///   - timeout: seconds per fixture (10 by default).
    public init(command: String, timeout: Double = 10) {
        self.command = command
        self.timeout = timeout
    }

    public func decision(for fixture: Fixture, profile: Profile?) throws -> [UInt8] {
        try fixture.withFile(profile: profile) { file in
            let outcome: ChildProcess.Outcome
            do {
                outcome = try ChildProcess.run(["/bin/sh", "-c", command + " \"$1\"", "pushbridge-against", file], timeout: timeout)
            } catch {
                throw ImplementationFailure("`\(command)` could not be started: \(error)")
            }
            let stderr = String(decoding: outcome.stderr, as: UTF8.self).split(separator: "\n").first.map { ": " + $0 } ?? ""
            if outcome.timedOut { throw ImplementationFailure("`\(command)` timed out after \(Self.seconds(timeout)) s") }
            if let signal = outcome.signal { throw ImplementationFailure("`\(command)` crashed (signal \(signal))\(stderr)") }
            if let status = outcome.status, status > 128, status < 160 {  // the shell reports a child killed by signal N as 128 + N
                throw ImplementationFailure("`\(command)` crashed (signal \(status - 128))\(stderr)")
            }
            if let status = outcome.status, status != 0 { throw ImplementationFailure("`\(command)` exited with status \(status)\(stderr)") }
            return outcome.stdout
        }
    }

    /// A command prints decisions only: `expect.queries` are not judged.
    public func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }

    /// Checks, before a run, that the command's program exists and can be executed (a path, a
    /// program on `PATH` or a shell builtin), so a typo stops at once instead of failing every fixture.
    /// - Throws: ``ImplementationFailure`` naming the program.
    public func checkRunnable() throws {
        guard let program = Self.program(of: command) else { throw ImplementationFailure("the command is empty") }
        if program.contains("/") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: program, isDirectory: &isDirectory) else {
                throw ImplementationFailure("no such file: \(program)")
            }
            guard !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: program) else {
                throw ImplementationFailure("\(program) is \(isDirectory.boolValue ? "a directory" : "not executable")")
            }
            return
        }
        let found = try? ChildProcess.run(["/bin/sh", "-c", "command -v \"$1\"", "pushbridge-check", program], timeout: 5)
        guard found?.status == 0 else { throw ImplementationFailure("command not found: \(program)") }
    }

    /// The first word of a shell command: the program it runs (quotes removed); `nil` when empty.
    static func program(of command: String) -> String? {
        let text = command.drop { $0 == " " || $0 == "\t" }
        guard let first = text.first else { return nil }
        if first == "\"" || first == "'" {
            let rest = text.dropFirst()
            return String(rest.prefix { $0 != first })
        }
        return String(text.prefix { $0 != " " && $0 != "\t" })
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// An implementation under test behind HTTP: each fixture is POSTed as JSON (with `profile` set
/// when a profile is asked for) and the response body is the decision JSON.
public struct HTTPDecisionProvider: DecisionProvider {
    public let url: URL
    /// Seconds per request.
    public let timeout: Double

    /// - Parameters:
    ///   - url: an `http://` or `https://` URL.
    ///   - timeout: seconds per fixture (10 by default).
    public init(url: URL, timeout: Double = 10) {
        self.url = url
        self.timeout = timeout
    }

    public func decision(for fixture: Fixture, profile: Profile?) throws -> [UInt8] {
        try post(fixture.bytes(profile: profile))  // the scenario without its answer
    }

    /// Checks, before a run, that something accepts TCP connections at the URL's host and port.
    /// - Throws: ``ImplementationFailure`` naming the address.
    public func checkReachable() throws {
        guard let host = url.host else { throw ImplementationFailure("\(url) has no host") }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        guard Self.accepts(host: host, port: port, timeout: min(timeout, 5)) else {
            throw ImplementationFailure("nothing answers at \(host):\(port) (\(url.absoluteString))")
        }
    }

    /// Whether a TCP connection to host:port opens within the timeout.
    static func accepts(host: String, port: Int, timeout: Double) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            defer { entry = info.pointee.ai_next }
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return true }
            guard errno == EINPROGRESS else { continue }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { continue }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0 { return true }
        }
        return false
    }

    func post(_ bytes: [UInt8]) throws -> [UInt8] {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(bytes)
        let box = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            throw ImplementationFailure("POST \(url.absoluteString) timed out after \(CommandDecisionProvider.seconds(timeout)) s")
        }
        let (data, status, error) = box.get()
        if let error { throw ImplementationFailure("POST \(url.absoluteString) failed: \(error.localizedDescription)") }
        let text = [UInt8](data ?? Data())
        guard let status, (200..<300).contains(status) else {
            let first = String(decoding: text.prefix(200), as: UTF8.self).split(separator: "\n").first.map { ": " + $0 } ?? ""
            throw ImplementationFailure("POST \(url.absoluteString) answered HTTP \(status.map(String.init) ?? "?")\(first)")
        }
        return text
    }

    /// An HTTP server answers decisions only: `expect.queries` are not judged.
    public func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }
}

/// Hands a URLSession result from its callback thread to the waiting one.
final class ResponseBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var status: Int?
    private var error: Error?

    func set(data: Data?, status: Int?, error: Error?) {
        lock.lock()
        defer { lock.unlock() }
        (self.data, self.status, self.error) = (data, status, error)
    }

    func get() -> (Data?, Int?, Error?) {
        lock.lock()
        defer { lock.unlock() }
        return (data, status, error)
    }
}
