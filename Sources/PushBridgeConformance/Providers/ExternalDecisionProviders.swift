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
    /// Runs `body` with a path to this fixture as a file: the fixture's own file when it is one and
    /// no profile is asked for, else a temporary file holding the scenario (with `profile` set).
    public func withFile<T>(profile: Profile?, _ body: (String) throws -> T) throws -> T {
        if isFile && profile == nil { return try body(path) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-against-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        guard FileManager.default.createFile(atPath: file, contents: Data(bytes(profile: profile))) else {
            throw ImplementationFailure("could not write the temporary fixture \(file)")
        }
        return try body(file)
    }

    /// The scenario document, with `profile` set when one is asked for.
    public func document(profile: Profile?) -> JSONValue {
        guard let profile, case .object(var object) = document else { return document }
        object["profile"] = .string(profile.id)
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
        if fixture.isFile && profile == nil { return try post(FixtureDiscovery.read(fixture.path)) }  // the file as written
        return try post(fixture.bytes(profile: profile))
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
