import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushBridgeConformance
import PushBridgeJSON

/// `pushbridge push-task`: starts a push task on a running `pushbridge serve` (or follows or cancels
/// one) and prints its progress until it ends.
struct PushTaskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-task",
        abstract: "Start a push task (a campaign) on a running service and follow it to its end.",
        discussion: """
            Sends the message file (one-to-one, in --dialect) to every user of the app, or to the users in \
            the given labels and with the given attributes, through POST /v1/apps/{app}/push-tasks; then, \
            unless --detach, reads the task every --every seconds and prints a progress line on stderr (one \
            line rewritten on a terminal, a line a change otherwise) until the task has ended and its \
            deliveries are settled. The task's last state goes to stdout as JSON. \
            --follow ID follows a task made otherwise (a vendor's /push/task or im_push); --cancel ID cancels one. \
            The app's key comes from --key-file or PUSHBRIDGE_APP_KEY. \
            Exit status: 0 the task finished (or was started, with --detach); 1 it was cancelled; 2 bad input \
            or a refusal (the service's error on stderr); 4 the service could not be reached or failed.
            """)

    @Option(help: "The service, such as http://127.0.0.1:8080.")
    var url: String

    @Option(help: "The app.")
    var app: String

    @Option(help: "A file holding the app's key (default: PUSHBRIDGE_APP_KEY).")
    var keyFile: String?

    @Option(help: "The message's dialect: easemob-legacy, agora-silent or tencent-tim.")
    var dialect: String?

    @Option(help: "The sender, for a message that names none.")
    var sender: String?

    @Option(name: .customLong("label"), help: "A label every receiver is in (repeat for several).")
    var labels: [String] = []

    @Option(name: .customLong("any-label"), help: "Labels a receiver is in one of at least (repeat for several).")
    var anyLabels: [String] = []

    @Option(name: .customLong("attribute"), help: "NAME=VALUE: an attribute value every receiver has (repeat for several).")
    var attributes: [String] = []

    @Option(name: .customLong("any-attribute"), help: "NAME=VALUE: attribute values a receiver has one of at least (repeat for several).")
    var anyAttributes: [String] = []

    @Option(help: "When the task starts (ISO 8601, at most 30 days ahead; default: now).")
    var startAt: String?

    @Option(help: "Follow this task (made otherwise) instead of starting one.")
    var follow: Int64?

    @Option(help: "Cancel this task and print its state.")
    var cancel: Int64?

    @Flag(help: "Print the new task and return without following it.")
    var detach = false

    @Option(help: "Seconds between progress reads.")
    var every: Double = 0.5

    @Argument(help: "The message file: one one-to-one message in --dialect's shape; its receiver is replaced by each of the task's.")
    var file: String?

    func validate() throws {
        let modes = [file != nil, follow != nil, cancel != nil].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("give one of: a message file (start a task), --follow ID, --cancel ID") }
        if file != nil && dialect == nil { throw ValidationError("--dialect is required with a message file") }
        if file == nil && (dialect != nil || sender != nil || !labels.isEmpty || !anyLabels.isEmpty || !attributes.isEmpty || !anyAttributes.isEmpty || startAt != nil || detach) {
            throw ValidationError("--dialect, --sender, --label, --any-label, --attribute, --any-attribute, --start-at and --detach go with a message file")
        }
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else { throw ValidationError("--url: expected an http:// or https:// URL, found \"\(url)\"") }
        guard every > 0, every <= 3600 else { throw ValidationError("--every: expected seconds between 0 and 3600, found \(every)") }
    }

    func run() async throws {
        let key = try readSecret(file: keyFile, option: "--key-file", variable: "PUSHBRIDGE_APP_KEY", what: "the app's key", command: "push-task")
        // A connection refused is retried until the connect timeout: a service that is not there is said in seconds.
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(3)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let service = TaskService(client: client, base: url.hasSuffix("/") ? String(url.dropLast()) : url, app: app, key: key)
        do {
            try await run(service)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func run(_ service: TaskService) async throws {
        let task: JSONValue
        if let id = cancel {
            task = try await service.call(.POST, "/push-tasks/\(id)/cancel", body: nil)
            printTask(task)
            return
        } else if let id = follow {
            task = try await service.call(.GET, "/push-tasks/\(id)", body: nil)
        } else {
            task = try await service.call(.POST, "/push-tasks?" + query(), body: try requestBody())
            if detach {
                printTask(task)
                return
            }
        }
        guard case .int(let id)? = task["id"] else {
            printError("pushbridge: push-task: expected a task with an id from the service, found \(task.compactText)")
            throw ExitCode(4)
        }
        let ended = try await follow(id, in: service, first: task)
        printTask(ended)
        if ended["state"] == "cancelled" { throw ExitCode(1) }
    }

    /// Reads the task until it has ended and its deliveries are settled, printing its progress.
    private func follow(_ id: Int64, in service: TaskService, first: JSONValue) async throws -> JSONValue {
        let line = TaskProgressLine(rewriting: isatty(STDERR_FILENO) == 1)
        var task = first
        while true {
            line.show(Self.progress(task))
            if Self.isSettled(task) { break }
            try await Task.sleep(nanoseconds: UInt64(every * 1_000_000_000))
            task = try await service.call(.GET, "/push-tasks/\(id)", body: nil)
        }
        line.end()
        return task
    }

    /// Whether a task has ended and none of its deliveries waits (a service that does not deliver
    /// queues none).
    static func isSettled(_ task: JSONValue) -> Bool {
        (task["state"] == "finished" || task["state"] == "cancelled") && (task["deliveries"]?["queued"]?.intValue ?? 0) == 0
    }

    /// `task 1862…: running — 12,300 decided: 12,000 pushed, 300 suppressed (no-device 300); 11,000 delivered, 1,000 queued, 0 failed`.
    static func progress(_ task: JSONValue) -> String {
        func grouped(_ number: Int64) -> String { number.formatted(.number.grouping(.automatic)) }
        func count(_ value: JSONValue?) -> String { grouped(value?.intValue ?? 0) }
        var suppressed: [(String, Int64)] = []
        if case .object(let reasons)? = task["suppressed"] {
            for (reason, value) in reasons { suppressed.append((reason, value.intValue ?? 0)) }
        }
        let total = suppressed.reduce(Int64(0)) { $0 + $1.1 }
        var line = "task \(task["id"]?.intValue.map(String.init) ?? "?"): \(task["state"]?.stringValue ?? "?")"
        if task["state"] == "scheduled", let start = task["startAt"]?.stringValue { line += " (starts \(start))" }
        line += " — \(count(task["targets"])) decided: \(count(task["pushed"])) pushed, \(grouped(total)) suppressed"
        if !suppressed.isEmpty { line += " (" + suppressed.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ")" }
        if let deliveries = task["deliveries"] {
            line += "; \(count(deliveries["delivered"])) delivered, \(count(deliveries["queued"])) queued, \(count(deliveries["failed"])) failed"
        }
        return line
    }

    private func printTask(_ task: JSONValue) {
        writeOut(Array((task.compactText + "\n").utf8))
    }

    private func query() -> String {
        var items = ["dialect=" + percentEncoded(dialect ?? "")]
        if let sender { items.append("sender=" + percentEncoded(sender)) }
        return items.joined(separator: "&")
    }

    /// A query value percent-encoded: every byte but RFC 3986's unreserved ASCII characters.
    private func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `{"message", "audience", "startAt"}` from the file and the options.
    private func requestBody() throws -> JSONValue {
        let message = try rejectingBadInput(file: file!) { try JSONParser.parse(try FixtureDiscovery.read(file!)) }
        func pairs(_ list: [String], option: String) throws -> JSONValue {
            var object = JSONObject()
            for item in list {
                guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                    printError("pushbridge: \(option): expected NAME=VALUE, found \"\(item)\" [invalid-value]")
                    throw ExitCode(2)
                }
                object[String(item[..<equals])] = .string(String(item[item.index(after: equals)...]))
            }
            return .object(object)
        }
        var audience = JSONObject()
        if !labels.isEmpty { audience["labels"] = .array(labels.map(JSONValue.string)) }
        if !anyLabels.isEmpty { audience["anyLabels"] = .array(anyLabels.map(JSONValue.string)) }
        if !attributes.isEmpty { audience["attributes"] = try pairs(attributes, option: "--attribute") }
        if !anyAttributes.isEmpty { audience["anyAttributes"] = try pairs(anyAttributes, option: "--any-attribute") }
        var body = JSONObject([("message", message)])
        if !audience.isEmpty { body["audience"] = .object(audience) }
        if let startAt { body["startAt"] = .string(startAt) }
        return .object(body)
    }
}

/// An app's push tasks on a running service, over its native API.
private struct TaskService {
    let client: HTTPClient
    let base: String
    let app: String
    let key: String

    /// One call under `/v1/apps/{app}`; a refusal → its error on stderr and exit 2, a failure → exit 4.
    func call(_ method: HTTPMethod, _ path: String, body: JSONValue?) async throws -> JSONValue {
        var request = HTTPClientRequest(url: base + "/v1/apps/" + app + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer " + key)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: Array(body.compactText.utf8)))
        }
        let status: HTTPResponseStatus
        let bytes: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            status = response.status
            bytes = try await response.body.collect(upTo: 1 << 20)
        } catch {
            printError("pushbridge: push-task: \(method.rawValue) \(base)/v1/apps/\(app)\(path): the service did not answer: \(error) [unreachable]")
            throw ExitCode(4)
        }
        let answer = (try? JSONParser.parse(bytes.readableBytesView)) ?? .string(String(buffer: bytes))
        guard (200..<300).contains(status.code) else {
            printError("pushbridge: push-task: \(method.rawValue) /v1/apps/\(app)\(path): HTTP \(status.code) \(answer.compactText)")
            throw ExitCode(status.code >= 500 ? 4 : 2)
        }
        return answer
    }
}

/// A progress line on stderr: rewritten in place on a terminal, a new line for each change otherwise.
private final class TaskProgressLine {
    let rewriting: Bool
    private var last = ""

    init(rewriting: Bool) { self.rewriting = rewriting }

    func show(_ line: String) {
        guard line != last else { return }
        last = line
        FileHandle.standardError.write(Data(((rewriting ? "\r\u{1B}[K" : "") + line + (rewriting ? "" : "\n")).utf8))
    }

    func end() {
        if rewriting { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
