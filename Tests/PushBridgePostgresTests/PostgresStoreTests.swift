import Foundation
import PushBridgeCore
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The PostgreSQL store against a real server: connecting, migrations.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    @Test("Schemas: two stores in two schemas of one database keep apart; the URL names the schema")
    func schemasKeepApart() async throws {
        guard let url = testPostgresURL() else { return }
        let a = try await PostgresStateStore.open(location: try freshPostgresSchema(url))
        let b = try await PostgresStateStore.open(location: try freshPostgresSchema(url))
        try await a.writing { try await $0.setMembers(["u1", "u2"], of: "g") }
        #expect(try await b.reading { try await $0.members(of: "g") } == [])
        #expect(try await a.reading { try await $0.members(of: "g") } == ["u1", "u2"])
        let named = try PostgresLocation(url: url + "?schema=app_demo")
        #expect(named.schema == "app_demo" && named.description.hasSuffix("?schema=app_demo"))
        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url + "?schema=Bad-Name") }
        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url + "?sslmode=require") }
    }

    @Test("A node's pool: apps in several schemas share its connections; a use that finds none free within the deadline is busy, then works")
    func onePoolServesSeveralSchemasWithinItsLimit() async throws {
        guard let url = testPostgresURL() else { return }
        // The schemas are made first, each with a deadline a loaded machine's migration keeps: the
        // pool's short deadline is for the wait this test measures, not for making tables.
        var schemas: [PostgresLocation] = []
        for _ in 0..<2 {
            var schema = try freshPostgresSchema(url)
            schema.deadline = .seconds(60)
            _ = try await PostgresStateStore.open(location: schema).appliedMigrations()
            schemas.append(schema)
        }
        var location = try PostgresLocation(url: url)
        location.deadline = .seconds(5)
        let pool = PostgresConnections(location: location, limit: 1, logger: .init(label: "test"), runsItself: true)
        let a = try await PostgresStateStore.open(location: schemas[0], app: "", pool: pool)
        let b = try await PostgresStateStore.open(location: schemas[1], app: "", pool: pool)
        // One connection moves between the two schemas: each store still sees only its own rows.
        for round in 0..<3 {
            try await a.writing { try await $0.setMembers(["a\(round)"], of: "g") }
            try await b.writing { try await $0.setMembers(["b\(round)"], of: "g") }
            #expect(try await a.reading { try await $0.members(of: "g") } == ["a\(round)"])
            #expect(try await b.reading { try await $0.members(of: "g") } == ["b\(round)"])
        }
        #expect(pool.openCount == 1)
        // While a write holds the only connection, a read waits at most the deadline and is busy.
        let (holds, held) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let holding = Task {
            try await a.writing { transaction in
                try await transaction.setMembers(["held"], of: "h")
                held.yield()
                for await _ in released { break }
            }
        }
        for await _ in holds { break }  // the write holds the connection now
        let start = ContinuousClock.now
        let refused: StoreError?
        do {
            _ = try await b.reading { try await $0.members(of: "g") }
            refused = nil
        } catch let error as StoreError { refused = error }
        let waited = ContinuousClock.now - start
        #expect(refused?.code == .busy && "\(refused.map { "\($0)" } ?? "")".contains("all 1 connections"), "\(String(describing: refused))")
        #expect(waited >= .milliseconds(4_900) && waited < .seconds(60), "waited \(waited): the deadline, and not unbounded")
        // A waiter is handed the connection when it comes back.
        let handed = Task { try await b.reading { try await $0.members(of: "g") } }
        let asked = ContinuousClock.now
        while pool.waitingCount == 0 && ContinuousClock.now - asked < .seconds(30) { try await Task.sleep(for: .milliseconds(10)) }  // it waits now
        release.yield()
        try await holding.value
        #expect(try await handed.value == ["b2"])
        #expect(pool.openCount == 1)
    }

    @Test("Migrations apply once, also when two stores open a new database together")
    func migrationsApplyOnce() async throws {
        guard let url = testPostgresURL() else { return }
        var fresh = try await freshPostgresDatabase(url)
        // The second waits for the lock while the first migrates: longer than a statement's 5 s on a loaded machine.
        fresh.deadline = .seconds(60)
        let location = fresh
        // Two nodes starting at once: the advisory lock lets one migrate, the other sees it done.
        async let a = Task.detached { try await PostgresStateStore.open(location: location).appliedMigrations() }.value
        async let b = Task.detached { try await PostgresStateStore.open(location: location).appliedMigrations() }.value
        let (first, second) = try await (a, b)
        #expect(first == PostgresStateStore.migrationIdentifiers)
        #expect(second == PostgresStateStore.migrationIdentifiers)
        #expect(try await PostgresStateStore.open(location: location).appliedMigrations() == PostgresStateStore.migrationIdentifiers)
    }

    @Test("The commit functions keep one plan a connection and their own search path")
    func theCommitFunctionKeepsOnePlan() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresSchema(url)
        _ = try await PostgresStateStore.open(location: location).appliedMigrations()
        let schema = try #require(location.schema)
        // Read by psql from the catalog, not through the store: what every call of the function runs with.
        let configs = try PostgresSharedTablesTests.psql(location,
            "SELECT array_to_string(p.proconfig, ',') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '\(schema)' AND p.proname LIKE 'pushbridge\\_commit\\_%'")
        let lines = configs.split(separator: "\n")
        #expect(lines.count == 2, "the one-app and the several-apps commit functions: \(configs)")
        for line in lines {
            let settings = Set(line.split(separator: ",").map(String.init))
            #expect(settings == ["search_path=\(schema)", "plan_cache_mode=force_generic_plan", "enable_seqscan=off"], "\(settings)")
        }
        // The schema has the functions PushBridge calls and no other: the app schemas' commit
        // functions are made by no migration now, and dropped where an older PushBridge made them.
        let functions = try PostgresSharedTablesTests.psql(location,
            "SELECT p.proname || '/' || p.pronargs FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '\(schema)' ORDER BY 1")
        #expect(functions.split(separator: "\n").map(String.init) == ["pushbridge_commit_apps/33", "pushbridge_commit_logged/23", "pushbridge_write_lock/2"], "\(functions)")
    }

    @Test("A schema whose commit functions an older PushBridge wrote ends with today's: the later migration writes them whole")
    func olderCommitFunctionsAreRewritten() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresSchema(url)
        _ = try await PostgresStateStore.open(location: location).appliedMigrations()
        let schema = try #require(location.schema)
        func psql(_ sql: String) throws -> String { try PostgresSharedTablesTests.psql(location, "SET search_path TO \(schema); " + sql) }
        let bodies = "SELECT string_agg(p.proname || ':' || md5(p.prosrc) || ':' || array_to_string(p.proconfig, ','), ' ' ORDER BY p.proname) FROM pg_proc p "
            + "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '\(schema)' AND p.proname LIKE 'pushbridge\\_commit\\_%'"
        let today = try psql(bodies)
        // As a database without the migration that rewrote them: both functions as an older PushBridge left them.
        let rewrite = "2026-12-06-commit-functions-look-up-by-key"
        #expect(PostgresStateStore.migrationIdentifiers.contains(rewrite))
        _ = try psql("""
            UPDATE pg_proc SET prosrc = 'BEGIN RETURN; END', proconfig = NULL WHERE pronamespace = '\(schema)'::regnamespace AND proname LIKE 'pushbridge\\_commit\\_%';
            DELETE FROM pushbridge_migrations WHERE identifier = '\(rewrite)';
            """)
        #expect(try psql(bodies) != today)
        let applied = try await PostgresStateStore.open(location: location).appliedMigrations()
        #expect(applied.last == rewrite && applied.sorted() == PostgresStateStore.migrationIdentifiers.sorted(), "applied again, and only it: \(applied)")
        #expect(try psql(bodies) == today)
    }

    @Test("The directory keeps a binding of any family: the store names no vendor")
    func theDirectoryTakesAnyVendorFamily() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresSchema(url)
        let directory = try PostgresAppDirectory(location: location)
        #expect(try await directory.register(RegisteredApp(id: "a", keyHash: Array(repeating: 7, count: 32), createdAt: Instant(milliseconds: 1))))
        let example = VendorBinding(app: "a", vendor: .init(rawValue: "example"), key: "k", account: "x", secret: [1], boundAt: Instant(milliseconds: 2))
        #expect(try await directory.bind(example))
        #expect(try await PostgresAppDirectory(location: location).vendorBindings() == [example])
        // Still one app per key and family.
        #expect(try await directory.register(RegisteredApp(id: "b", keyHash: Array(repeating: 8, count: 32), createdAt: Instant(milliseconds: 3))))
        var other = example
        other.app = "b"
        #expect(try await !directory.bind(other))
    }

    @Test("A database migrated by a newer PushBridge is refused, naming the migration")
    func newerSchemaIsRefused() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await freshPostgresDatabase(url)
        _ = try await PostgresStateStore.open(location: location)
        let run = try runProgram("/usr/bin/env", [
            "psql", "-q", "-v", "ON_ERROR_STOP=1", "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)", "-c",
            "INSERT INTO pushbridge_migrations (identifier, applied_at) VALUES ('2099-01-01-future', 0)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        await #expect {
            _ = try await PostgresStateStore.open(location: location)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .newerSchema && error.message.contains("2099-01-01-future")
        }
    }

    @Test("An unreachable server is a clear error that names it without the password")
    func unreachableServer() async throws {
        // Port 1: nothing listens there on a test machine.
        let location = try PostgresLocation(url: "postgres://pb:s3cret-password@127.0.0.1:1/pushbridge")
        #expect(location.description == "postgres://pb@127.0.0.1:1/pushbridge")
        await #expect {
            _ = try await PostgresStateStore.open(location: location)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            let text = "\(error)"
            return error.code == .unreachable && text.contains("127.0.0.1:1") && !text.contains("s3cret")
        }
    }

    @Test("Store URLs: what is missing is named, the password never echoed")
    func locations() throws {
        let full = try PostgresLocation(url: "postgresql://app:p%40ss@db.internal:6543/push")
        #expect(full.user == "app" && full.password == "p@ss" && full.host == "db.internal" && full.port == 6543 && full.database == "push")
        #expect(try PostgresLocation(url: "postgres://app@localhost/push").port == 5432)
        for (bad, expected) in [
            ("mysql://app@h/db", "postgres://"), ("postgres://h/db", "a user"), ("postgres://app@h", "a database"),
            ("postgres://app:secret@h:70000/db", "port"),
        ] {
            #expect {
                _ = try PostgresLocation(url: bad)
            } throws: { error in
                "\(error)".contains(expected) && !"\(error)".contains("secret")
            }
        }
    }
}
