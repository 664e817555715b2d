import Foundation
import PushBridgeJSON
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The module boundaries, read from `Package.swift` itself through `swift package
/// dump-package`: a forbidden edge fails here, naming the edge.
@Suite("Module graph")
struct ModuleGraphTests {
    /// A target's name, kind and direct dependencies on other targets of this package.
    struct Target {
        var name: String
        var type: String
        var dependencies: [String]
        /// Products of other packages it depends on (`Hummingbird`, `ArgumentParser`, …).
        var products: [String] = []
    }

    /// The package's targets as SwiftPM reads them.
    static let targets: Result<[String: Target], any Error> = Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-dump-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch path of its own: the running `swift test` holds the lock on .build.
        process.arguments = ["swift", "package", "--package-path", Repository.root.path, "--scratch-path", scratch, "dump-package"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ModuleGraphError(message: "swift package dump-package exited \(process.terminationStatus)") }
        let root = try JSONParser.parse([UInt8](data))
        var out: [String: Target] = [:]
        for value in root["targets"]?.arrayValue ?? [] {
            guard let name = value["name"]?.stringValue, let type = value["type"]?.stringValue else { continue }
            let dependencies = (value["dependencies"]?.arrayValue ?? []).compactMap { dependency -> String? in
                // {"byName": ["X", null]} or {"target": ["X", null]}; products of other packages are not edges here.
                (dependency["byName"] ?? dependency["target"])?.arrayValue?.first?.stringValue
            }
            let products = (value["dependencies"]?.arrayValue ?? []).compactMap { $0["product"]?.arrayValue?.first?.stringValue }
            out[name] = Target(name: name, type: type, dependencies: dependencies, products: products)
        }
        return out
    }

    struct ModuleGraphError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Everything a target reaches through its dependencies, not counting itself.
    static func closure(of name: String, in targets: [String: Target]) -> Set<String> {
        var seen = Set<String>()
        var stack = targets[name]?.dependencies ?? []
        while let next = stack.popLast() {
            guard seen.insert(next).inserted else { continue }
            stack += targets[next]?.dependencies ?? []
        }
        return seen
    }

    /// The vendor modules: each offers a `VendorRESTFamily`.
    static let vendorModules: Set<String> = ["PushBridgeEasemob", "PushBridgeTencent"]

    /// The rules, as (target, what it must not reach, why).
    static let forbidden: [(from: String, to: Set<String>, why: String)] = [
        ("PushBridgeJSON", ["CJSONC", "CSQLite"], "the JSON module links no system library"),
        ("PushBridgeConformance", ["PushBridgeStore", "PushBridgeFacade", "PushBridgeServer", "PushBridgeDelivery", "PushBridgePostgres", "CSQLite"],
            "the harness knows implementations only through DecisionProvider"),
        ("PushBridgeStore", ["PushBridgeFacade", "PushBridgeConformance", "PushBridgeServer", "PushBridgeDelivery"], "storage sits below the facade"),
        ("PushBridgeDialects", ["PushBridgeStore", "PushBridgeFacade", "PushBridgeConformance", "CJSONC", "CSQLite"], "the dialects are pure"),
        ("PushBridgeFacade", ["PushBridgeConformance", "CJSONC", "PushBridgeServer", "PushBridgeDelivery"], "the facade knows no harness and no transport"),
        ("PushBridgeServer", ["PushBridgeConformance", "PushBridgeFacadeConformance", "PushBridgeServiceConformance", "CJSONC"],
            "the service adds transport over the facade, not the harness"),
        ("PushBridgeServer", ["PushBridgePostgres"],
            "the service knows storage only as ServiceStorage: the executable builds a backend's and injects it"),
        ("PushBridgeServer", vendorModules,
            "the service knows vendors only as the VendorRESTFamily values it is given: a vendor is one module the executable composes"),
        ("PushBridgeStore", vendorModules.union(["PushBridgeVendorREST"]), "storage keeps bindings of any family and names no vendor"),
        ("PushBridgeEasemob", ["PushBridgeTencent", "PushBridgePostgres", "PushBridgeConformance", "PushBridgeTesting"],
            "a vendor module is its family only: no other vendor, no store backend, no harness"),
        ("PushBridgeTencent", ["PushBridgeEasemob", "PushBridgePostgres", "PushBridgeConformance", "PushBridgeTesting"],
            "a vendor module is its family only: no other vendor, no store backend, no harness"),
        ("PushBridgeVendorREST", ["PushBridgeEasemob", "PushBridgeTencent", "PushBridgeStore", "PushBridgeFacade", "PushBridgeServer", "PushBridgeConformance", "CSQLite", "CJSONC"],
            "the vendor REST layer only translates into dialect calls and messages (no I/O)"),
        ("PushBridgeServiceConformance", ["PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeStore", "PushBridgeFacade", "CSQLite"],
            "service conformance knows the service only over the wire"),
        ("PushBridgePostgres", ["PushBridgeFacade", "PushBridgeServer", "PushBridgeDelivery", "PushBridgeConformance", "CJSONC"],
            "the PostgreSQL store is a store: below the facade"),
        ("PushBridgeDelivery", ["PushBridgeServer", "PushBridgeConformance", "PushBridgeVendorREST", "PushBridgeAPNsMock", "CJSONC"],
            "delivery moves the facade's bytes to APNs; it knows no server, harness or mock"),
        ("PushBridgeAPNsMock", [
            "PushBridgeJSON", "PushBridgeCore", "PushBridgeDialects", "PushBridgeStore", "PushBridgeFacade", "PushBridgeDelivery", "PushBridgeServer",
            "PushBridgeConformance", "CSQLite", "CJSONC",
        ], "the mock APNs is test support anyone can use: it knows no PushBridge module"),
        ("PushBridgeTesting", ["PushBridgeConformance", "PushBridgeFacadeConformance", "PushBridgeServiceConformance", "PushBridgeAPNsMock", "CJSONC"],
            "the test service is the service under test: it knows no harness and no mock"),
        ("PushBridgeRecordCoding", [
            "PushBridgeDialects", "PushBridgeStore", "PushBridgeFacade", "PushBridgePostgres", "PushBridgeServer", "PushBridgeDelivery",
            "PushBridgeConformance", "CSQLite", "CJSONC",
        ], "the stored formats are one pure codec of the core's values: no store, no facade, no I/O"),
    ]

    /// Third-party products a library may use, for libraries that need one (and no more).
    static let allowedProducts: [String: Set<String>] = [
        "PushBridgeVendorREST": ["Crypto"],
        // Black-box mode runs the APNs capture (the public mock) in the harness's process.
        "PushBridgeServiceConformance": [
            "AsyncHTTPClient", "NIOCore", "NIOHTTP1", "Crypto", "NIOPosix", "NIOConcurrencyHelpers", "NIOHTTP2", "NIOSSL", "X509",
        ],
        "PushBridgeDelivery": ["AsyncHTTPClient", "NIOCore", "NIOPosix", "NIOHTTP1", "NIOHTTP2", "NIOHPACK", "NIOSSL", "NIOTLS", "Crypto"],
        "PushBridgeAPNsMock": ["NIOCore", "NIOPosix", "NIOConcurrencyHelpers", "NIOHTTP1", "NIOHTTP2", "NIOSSL", "Crypto", "X509"],
        "PushBridgePostgres": ["PostgresNIO", "NIOCore", "NIOPosix", "Logging", "Crypto"],
        // The service's own products (PushBridgeServer), and Hummingbird's testing client on top.
        "PushBridgeTesting": [
            "Hummingbird", "HummingbirdCore", "HummingbirdTesting", "HTTPTypes", "NIOHTTPTypes", "NIOCore", "NIOPosix", "NIOHTTP1",
            "NIOHTTP2", "NIOHPACK", "NIOSSL", "NIOTLS", "NIOExtras", "NIOConcurrencyHelpers", "AsyncHTTPClient", "Crypto", "Logging",
            "Metrics", "Prometheus", "ServiceLifecycle", "Yams",
        ],
    ]

    /// Libraries a user imports for one job: they drag in no server, HTTP client or database
    /// driver (no product of another package at all).
    static let withoutThirdParty = [
        "PushBridgeJSON", "PushBridgeCore", "PushBridgeDialects", "PushBridgeConformance", "PushBridgeStore", "PushBridgeFacade",
        "PushBridgeFacadeConformance", "PushBridgeRecordCoding",
    ]

    @Test func theCoreNeedsOnlyTheJSONModule() throws {
        let targets = try Self.targets.get()
        #expect(targets["PushBridgeCore"]?.dependencies == ["PushBridgeJSON"])
        let reached = Self.closure(of: "PushBridgeCore", in: targets)
        #expect(reached == ["PushBridgeJSON"], "PushBridgeCore reaches \(reached.sorted())")
        #expect(reached.allSatisfy { targets[$0]?.type != "system" }, "the core must build without json-c or sqlite headers")
    }

    /// The stored formats (sent-message records, rolls, badge log rows) are one module that reaches
    /// the core and nothing else of PushBridge's, and no system library.
    @Test func theStoredFormatsNeedOnlyTheCore() throws {
        let targets = try Self.targets.get()
        let reached = Self.closure(of: "PushBridgeRecordCoding", in: targets)
        #expect(reached == ["PushBridgeCore", "PushBridgeJSON"], "PushBridgeRecordCoding reaches \(reached.sorted())")
        for owner in ["PushBridgeStore", "PushBridgeFacade"] {
            #expect(targets[owner]?.dependencies.contains("PushBridgeRecordCoding") == true, "\(owner) reads its formats through the codec")
        }
    }

    @Test func noForbiddenEdge() throws {
        let targets = try Self.targets.get()
        #expect(targets.count >= 10, "dump-package gave \(targets.count) targets")
        for rule in Self.forbidden where targets[rule.from] != nil {
            let bad = Self.closure(of: rule.from, in: targets).intersection(rule.to)
            #expect(bad.isEmpty, "\(rule.from) → \(bad.sorted()): \(rule.why)")
        }
        for name in Self.withoutThirdParty {
            for reached in [name] + Self.closure(of: name, in: targets) {
                #expect(targets[reached]?.products ?? [] == [], "\(name) reaches \(reached), which depends on \(targets[reached]?.products ?? [])")
            }
        }
        for (name, allowed) in Self.allowedProducts {
            for reached in [name] + Self.closure(of: name, in: targets) {
                let extra = Set(targets[reached]?.products ?? []).subtracting(allowed)
                #expect(extra.isEmpty, "\(name) reaches \(reached), which depends on \(extra.sorted())")
            }
        }
        #expect(targets["PushBridgeServer"]?.products.contains("Hummingbird") == true, "dump-package lists product dependencies")
        let executables = Set(targets.values.filter { $0.type == "executable" }.map(\.name))
        for target in targets.values where target.type != "test" {
            let bad = Set(target.dependencies).intersection(executables)
            #expect(bad.isEmpty, "\(target.name) depends on the executable \(bad.sorted())")
        }
    }

    /// No source file is over 500 lines: a file that grows past it is split by concern
    /// (`Type+Feature.swift`).
    @Test func noSourceFileIsOver500Lines() throws {
        let files = try Self.allSources()
        for (module, name, text) in files {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            #expect(lines <= 500, "\(module)/\(name) has \(lines) lines")
        }
        #expect(files.count >= 200, "every source file is read")
    }

    /// Every module's Swift sources, by module and path inside it.
    static func allSources() throws -> [(module: String, name: String, text: String)] {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Repository.root.appendingPathComponent("Sources").path).filter { !$0.hasPrefix(".") }
        #expect(modules.count >= 20, "every module's sources are read")
        return try modules.sorted().flatMap { module in try sources(module).map { (module, $0.name, $0.text) } }
    }

    /// A module's Swift sources, by path inside it.
    static func sources(_ module: String) throws -> [(name: String, text: String)] {
        let folder = Repository.root.appendingPathComponent("Sources/\(module)")
        let names = try #require(FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String])
        return try names.filter { $0.hasSuffix(".swift") }.sorted().map { name in
            (name, try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    }

    /// A source's code as the compiler reads it, for looking for words: comments and string literals
    /// removed (a word in either is not a use), every run of whitespace one space (a call split over
    /// lines, or spaced out, is still found).
    static func code(of text: String) -> String {
        var out = ""
        var chars = Array(text)[...]
        while let c = chars.first {
            if chars.starts(with: "//") {
                chars = chars.drop { $0 != "\n" }
            } else if chars.starts(with: "/*") {
                var rest = chars.dropFirst(2)
                while !rest.isEmpty && !rest.starts(with: "*/") { rest = rest.dropFirst() }
                chars = rest.dropFirst(2)
                out.append(" ")
            } else if c == "\"" {
                // A string literal (one line, or triple-quoted), escapes skipped.
                let triple = chars.starts(with: "\"\"\"")
                var rest = chars.dropFirst(triple ? 3 : 1)
                while let d = rest.first {
                    if d == "\\" { rest = rest.dropFirst(2); continue }
                    if triple ? rest.starts(with: "\"\"\"") : (d == "\"" || d == "\n") { break }
                    rest = rest.dropFirst()
                }
                chars = rest.dropFirst(triple ? 3 : 1)
                out.append("\"\"")
            } else {
                out.append(c)
                chars = chars.dropFirst()
            }
        }
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// What a source uses to wait synchronously for asynchronous work: a semaphore, a condition, a
    /// dispatch group's wait, a `wait()` or `wait(timeout:)` (a future's, a semaphore's) — each as the
    /// code reads, however it is spaced or split over lines; an awaited `wait()` (an async function of
    /// that name) is no block, nor an enum case named `wait` with values.
    static func blockingWaits(in text: String) -> [String] {
        let code = code(of: text)
        var found: [String] = []
        for word in ["DispatchSemaphore", "NSCondition", "DispatchGroup", "pthread_cond_wait"] where code.contains(word) { found.append(word) }
        let wait = try! Regex(#"(?<before>\bawait\s+(?:try\s+)?[\w.()]*)?\.\s?wait\s?\(\s?(?:\)|timeout|wallTimeout)"#)
        for match in code.matches(of: wait) where match.output["before"]?.substring == nil { found.append(String(code[match.range])) }
        return found
    }

    /// Nothing in `Sources/` bridges asynchronous work to a synchronous caller by blocking a thread.
    @Test func nothingWaitsForAsyncWorkByBlockingAThread() throws {
        let files = try Self.allSources()
        for (module, name, text) in files {
            let waits = Self.blockingWaits(in: text)
            #expect(waits.isEmpty, "\(module)/\(name) blocks a thread on async work: \(waits)")
        }
        #expect(files.count >= 200, "every source file is read")
    }

    @Test func theBlockingCheckReadsCodeNotFormatting() {
        #expect(Self.blockingWaits(in: "let s = DispatchSemaphore(value: 0)") == ["DispatchSemaphore"])
        #expect(Self.blockingWaits(in: "future\n    .wait\n    ()") == [".wait ()"])
        #expect(Self.blockingWaits(in: "x.wait()") == [".wait()"])
        #expect(Self.blockingWaits(in: "if s.wait(timeout: .now() + 1) == .timedOut {}") == [".wait(timeout"])
        #expect(Self.blockingWaits(in: "case .wait(let generation, let task):").isEmpty, "an enum case")
        #expect(Self.blockingWaits(in: "await end.wait()").isEmpty, "an awaited wait blocks nothing")
        #expect(Self.blockingWaits(in: "try await runEnd.wait()").isEmpty)
        #expect(Self.blockingWaits(in: "// DispatchSemaphore in a comment\n/* x.wait() */ let a = \"DispatchSemaphore\"").isEmpty)
        #expect(Self.blockingWaits(in: "let q = \"\"\"\n  .wait()\n\"\"\"").isEmpty)
    }

    /// The core's public model is plain values: the fan-out's own form (shared payload templates,
    /// references to a store's rows) is declared in `FanOut/`, where nothing is public; `APNsRequest`
    /// stores its payload and deliveries, and the public decision types use no unsafe type.
    @Test func theCoresPublicModelIsPlainValues() throws {
        let core = try Self.sources("PushBridgeCore")
        let fanOut = core.filter { $0.name.hasPrefix("FanOut/") }
        #expect(fanOut.count >= 2, "FanOut/ holds the fan-out's form")
        for (name, text) in fanOut {
            let declarations = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(!declarations.contains { $0.hasPrefix("public ") || $0.hasPrefix("open ") }, "PushBridgeCore/\(name) makes the fan-out's form public")
        }
        for name in ["PushDecision.swift", "ReceiverDecision.swift"] {
            let text = try #require(core.first { $0.name == name }?.text, "PushBridgeCore/\(name)")
            #expect(!text.contains("Unsafe") && !text.contains("unsafe"), "PushBridgeCore/\(name) uses an unsafe type")
        }
        let request = try #require(core.first { $0.name == "PushDecision.swift" }?.text)
        for field in ["public var payload: [UInt8]\n", "public var deliveries: [APNsDelivery]\n", "public var badgeCounter: Int\n"] {
            #expect(request.contains(field), "APNsRequest stores \(field)")
        }
    }

    /// The runtime's boundary, read from the sources: the service opens stores only through
    /// the `ServiceStorage` it is given (only the configuration's factory names a concrete store or
    /// directory), and no module of the service's runtime starts a thread or blocks on a semaphore or
    /// condition (an idle app costs no thread; async code never waits on a lock held across I/O).
    @Test func theServiceRuntimeOpensStoresThroughItsStorageAndStartsNoThread() throws {
        let sources = Self.sources
        let concrete = ["SQLiteStateStore(", "PostgresStateStore(", "PostgresStateStore.open(", "MemoryStateStore(", "SQLiteAppDirectory(", "PostgresAppDirectory(", "MemoryAppDirectory("]
        for (name, text) in try sources("PushBridgeServer") where name != "ServiceConfiguration+Storage.swift" {
            for type in concrete { #expect(!text.contains(type), "PushBridgeServer/\(name) opens \(type)…): stores come from the ServiceStorage") }
        }
        let blocking = ["Thread {", "Thread(", "Thread.detachNewThread", "NSCondition", "DispatchSemaphore"]
        for module in ["PushBridgeServer", "PushBridgeDelivery", "PushBridgeStore"] {
            // BlockingWait is how a synchronous caller (a tool, a test) waits for an awaited store; the
            // service never has one (checked below).
            for (name, text) in try sources(module) where !(module == "PushBridgeStore" && name == "Awaited/BlockingWait.swift") {
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
                for word in blocking { #expect(!code.contains(word), "\(module)/\(name) uses \(word): the runtime holds no thread of its own") }
            }
        }
        for module in ["PushBridgeServer", "PushBridgeDelivery", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeVendorREST"] {
            for (name, text) in try sources(module) { #expect(!text.contains("BlockingWait"), "\(module)/\(name) blocks a thread on an awaited store") }
        }
    }

    /// Nothing in the PostgreSQL module holds a thread while the server answers — no future waited for,
    /// no thread pool, no semaphore, no thread or task of its own — and nothing is replayed: the store's
    /// transaction methods are awaited. The service reads, opens stores and reads its directory awaited
    /// on it, and the delivery worker's outbox statements are awaited.
    @Test func thePostgresModuleBlocksNothing() throws {
        let sources = try Self.sources("PushBridgePostgres")
        #expect(sources.count >= 20, "the module's files are read")
        for (name, text) in sources {
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for word in [".wait(", "wait()", "NIOThreadPool", "DispatchSemaphore", "NSCondition", "Thread(", "Thread.detachNewThread", "Task.detached"] {
                #expect(!code.contains(word), "PushBridgePostgres/\(name) uses \(word)")
            }
            // Child tasks (`addTask`) are structured; a task of its own only runs the client of
            // connections a tool or test opened alone (a service runs it in its ServiceGroup).
            let unstructured = code.matches(of: /(^|[^A-Za-z])Task\s*(\(executorPreference:[^)]*\))?\s*\{/).count
            #expect(unstructured == (name == "PostgresConnections.swift" ? 1 : 0), "PushBridgePostgres/\(name) starts \(unstructured) task(s) of its own")
        }
        let connections = try #require(sources.first { $0.name == "PostgresConnections.swift" }?.text)
        #expect(connections.contains("private let client: PostgresClient") && connections.contains("func run() async { await client.run() }"), "postgres-nio's PostgresClient, run by its owner")
        for (name, text) in sources {
            #expect(!text.contains("replay") && !text.contains("Replay"), "PushBridgePostgres/\(name) replays a body")
        }
        let transaction = try #require(sources.first { $0.name == "PostgresStateStore+Transaction.swift" }?.text)
        #expect(transaction.contains("func rows(_ query: PostgresQuery) async throws -> [Cells] { try await session.query(query)"), "a statement is awaited")
        let server = try Self.sources("PushBridgeServer")
        let tenant = try #require(server.first { $0.name == "Apps/AppTenant.swift" }?.text)
        #expect(tenant.contains("package func reading<T: Sendable>(rerouting: Bool = true, _ body: @escaping @Sendable (PushFacade) async throws -> T)"), "reads are awaited")
        // Every read and write is awaited: a tenant has no synchronous read or write to offer.
        #expect(!tenant.contains("func read<") && !tenant.contains("func write<"), "a tenant's calls are awaited")
        for module in ["PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent"] {
            for (name, text) in try Self.sources(module) {
                #expect(!text.contains("tenant.read {") && !text.contains("tenant.read(") && !text.contains("tenant.write {") && !text.contains("tenant.write("), "\(module)/\(name) reads or writes synchronously")
            }
        }
        for name in ["Apps/KnownApps.swift", "Apps/VendorBindings.swift"] {
            let text = try #require(server.first { $0.name == name }?.text, "\(name)")
            #expect(!text.contains("NIOThreadPool"), "\(name) reads the directory on the thread pool")
        }
        let apps = try #require(server.first { $0.name == "Apps/ServiceApps.swift" }?.text)
        #expect(apps.contains("storage.isShared\n            ? try await storage.openStoreAwaited(forApp: id)"), "a shared storage's stores open awaited")
        // The delivery worker's claims, settlements, prunes and looks are the store's outbox, awaited
        // (PostgreSQL's own statements).
        let delivery = try #require(server.first { $0.name == "ServiceDelivery.swift" }?.text)
        for call in ["$0.claimDeliveries(dueBy:", "$0.settleDeliveries(settled, at: now)", "$0.pruneDeliveries(settledBefore:", "$0.outboxState()", "$0.releaseDeliveryClaims()"] {
            #expect(delivery.contains("tenant.outbox(writes:") && delivery.contains("{ try await " + call), "the worker awaits \(call)")
        }
    }

    /// A new vendor lands in one module: the server and the store name none in their code (types,
    /// members, imports; comments aside), every module offering a `VendorRESTFamily` is a known vendor
    /// module, and the executable composes each in one list.
    @Test func theServerAndTheStoreNameNoVendor() throws {
        let targets = try Self.targets.get()
        var offering: Set<String> = []
        for name in targets.keys where name.hasPrefix("PushBridge") && targets[name]?.type == "regular" {
            if try Self.sources(name).contains(where: { $0.text.contains("extension VendorRESTFamily {") }) { offering.insert(name) }
        }
        #expect(offering == Self.vendorModules, "modules offering a VendorRESTFamily: \(offering.sorted())")
        let words = ["Easemob", "Tencent", "Agora", ".easemob", ".tencent"]
        for module in ["PushBridgeServer", "PushBridgeStore"] {
            for (name, text) in try Self.sources(module) {
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                for word in words {
                    let lines = code.filter { $0.contains(word) }
                    #expect(lines.isEmpty, "\(module)/\(name) names \(word): \(lines.first ?? "")")
                }
            }
        }
        let composing = try #require(try Self.sources("pushbridge").first { $0.name.hasSuffix("Serve+Storage.swift") }?.text)
        for module in Self.vendorModules {
            let family = "." + module.dropFirst("PushBridge".count).lowercased()
            #expect(composing.contains("static let vendors: [VendorRESTFamily] = [") && composing.contains(family), "Serve.vendors lists \(family)")
        }
    }

    /// What a test target links: its dependencies' closure, not through an executable (the `pushbridge`
    /// dependency only has the tool built for the tests that run it).
    static func linked(_ name: String, in targets: [String: Target]) -> Set<String> {
        var targets = targets
        let executables = Set(targets.values.filter { $0.type == "executable" }.map(\.name))
        targets[name]?.dependencies.removeAll { executables.contains($0) }
        return closure(of: name, in: targets)
    }

    /// The service stack: what a test of a pure module must not build and link.
    static let serviceStack: Set<String> = [
        "PushBridgeServer", "PushBridgeDelivery", "PushBridgeTesting", "PushBridgeAPNsMock", "PushBridgeServiceConformance", "PushBridgeServiceTestSupport",
    ]

    /// Test targets get their module and the least test support they need: a change to the
    /// core neither rebuilds nor relinks the service stack for the core's tests.
    static let testTargetRules: [(tests: [String], forbidden: Set<String>, products: Set<String>, why: String)] = [
        (["PushBridgeJSONTests", "PushBridgeCoreTests", "PushBridgeDialectsTests", "PushBridgeConformanceTests"],
            serviceStack.union(["PushBridgeStore", "PushBridgeFacade", "PushBridgePostgres", "PushBridgeVendorREST", "PushBridgeStoreTestSupport", "CSQLite"]), [],
            "the pure modules' tests need the base support only"),
        (["PushBridgeVendorRESTTests"],
            serviceStack.union(["PushBridgeStore", "PushBridgeFacade", "PushBridgePostgres", "PushBridgeStoreTestSupport", "CSQLite"]), ["Crypto"],
            "the vendor REST layer's tests need its credentials' support only"),
        (["PushBridgeStoreTests", "PushBridgeFacadeTests", "pushbridgeTests"], serviceStack, allowedProducts["PushBridgePostgres"]!,
            "the stores' and facade's tests need the store support (every backing), not the service"),
    ]

    @Test func testTargetsGetTheLeastSupportTheyNeed() throws {
        let targets = try Self.targets.get()
        let tests = targets.values.filter { $0.type == "test" }
        #expect(tests.count >= 11, "dump-package gave \(tests.count) test targets")
        for test in tests {
            // A module's tests depend on their module (pushbridgeTests: the tool, which they run).
            let module = String(test.name.dropLast("Tests".count))
            #expect(test.dependencies.contains(module), "\(test.name) does not depend on \(module)")
        }
        for rule in Self.testTargetRules {
            for name in rule.tests {
                let reached = Self.linked(name, in: targets)
                #expect(targets[name] != nil, "no test target \(name)")
                #expect(reached.intersection(rule.forbidden).isEmpty, "\(name) → \(reached.intersection(rule.forbidden).sorted()): \(rule.why)")
                for target in [name] + reached {
                    let extra = Set(targets[target]?.products ?? []).subtracting(rule.products)
                    #expect(extra.isEmpty, "\(name) reaches \(target), which depends on \(extra.sorted()): \(rule.why)")
                }
            }
        }
        // The base support is the harness and JSON only.
        #expect(Self.closure(of: "PushBridgeTestSupport", in: targets) == ["PushBridgeConformance", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON", "CJSONC"])
        // Only the tests that run the tool have it built first.
        let runTool = Set(tests.filter { $0.dependencies.contains("pushbridge") }.map(\.name))
        #expect(!runTool.contains("PushBridgeJSONTests") && !runTool.contains("PushBridgeCoreTests") && !runTool.contains("PushBridgeVendorRESTTests"))
    }

    @Test func theRulesCatchABadEdge() throws {
        var targets = try Self.targets.get()
        targets["PushBridgeConformance"]?.dependencies.append("PushBridgeFacade")
        let bad = Self.closure(of: "PushBridgeConformance", in: targets).intersection(Self.forbidden[1].to)
        #expect(bad == ["PushBridgeFacade", "PushBridgeStore", "CSQLite"])
        // The server given a vendor module by name breaks the vendor rule.
        targets["PushBridgeServer"]?.dependencies.append("PushBridgeTencent")
        let vendorRule = try #require(Self.forbidden.first { $0.from == "PushBridgeServer" && $0.to == Self.vendorModules })
        #expect(Self.closure(of: "PushBridgeServer", in: targets).intersection(vendorRule.to) == ["PushBridgeTencent"])
        // A core test target given the service's test support reaches the service stack; the tool alone does not count.
        targets["PushBridgeCoreTests"]?.dependencies.append("pushbridge")
        #expect(Self.linked("PushBridgeCoreTests", in: targets).isDisjoint(with: Self.serviceStack))
        targets["PushBridgeCoreTests"]?.dependencies.append("PushBridgeServiceTestSupport")
        #expect(Self.linked("PushBridgeCoreTests", in: targets).isSuperset(of: ["PushBridgeServer", "PushBridgeServiceTestSupport"]))
    }
}
