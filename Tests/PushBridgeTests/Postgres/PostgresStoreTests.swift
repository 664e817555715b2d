import Foundation
import PushBridgePostgres
import PushBridgeStore
import Testing

/// The PostgreSQL store against a real server (issue 19, first steps): connecting, migrations.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    @Test("Migrations apply once, also when two stores open a new database together")
    func migrationsApplyOnce() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresDatabase(url)
        // Two nodes starting at once: the advisory lock lets one migrate, the other sees it done.
        async let a = Task.detached { try PostgresStateStore(location: location).appliedMigrations() }.value
        async let b = Task.detached { try PostgresStateStore(location: location).appliedMigrations() }.value
        let (first, second) = try await (a, b)
        #expect(first == PostgresStateStore.migrationIdentifiers)
        #expect(second == PostgresStateStore.migrationIdentifiers)
        #expect(try PostgresStateStore(location: location).appliedMigrations() == PostgresStateStore.migrationIdentifiers)
    }

    @Test("A database migrated by a newer PushBridge is refused, naming the migration")
    func newerSchemaIsRefused() throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresDatabase(url)
        _ = try PostgresStateStore(location: location)
        let run = try runProgram("/usr/bin/env", [
            "psql", "-q", "-v", "ON_ERROR_STOP=1", "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)", "-c",
            "INSERT INTO pushbridge_migrations (identifier, applied_at) VALUES ('2099-01-01-future', 0)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect {
            _ = try PostgresStateStore(location: location)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .newerSchema && error.message.contains("2099-01-01-future")
        }
    }

    @Test("An unreachable server is a clear error that names it without the password")
    func unreachableServer() throws {
        // Port 1: nothing listens there on a test machine.
        let location = try PostgresLocation(url: "postgres://pb:s3cret-password@127.0.0.1:1/pushbridge")
        #expect(location.description == "postgres://pb@127.0.0.1:1/pushbridge")
        #expect {
            _ = try PostgresStateStore(location: location)
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
