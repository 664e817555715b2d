import ArgumentParser
import Foundation
import Logging
import PushBridgeServer
import PushBridgeStore

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run PushBridge as an HTTP service: the native API of Specification §11, with health checks and Prometheus metrics.",
        discussion: """
            Settings come from defaults, then --config FILE (YAML, see Examples/service/pushbridge.yaml), then PUSHBRIDGE_… \
            environment variables (PUSHBRIDGE_LISTEN, PUSHBRIDGE_DB, PUSHBRIDGE_ADMIN_KEY, …), then these flags. Once listening \
            it prints `listening on http://HOST:PORT` on stdout; log lines go to stderr. SIGTERM or SIGINT: stop accepting, \
            finish the requests in flight, commit the queued writes, close the stores. Exit 2: a bad setting; 4: a store failure.
            """)

    @Option(help: "A YAML configuration file.")
    var config: String?

    @Option(help: "The data directory (apps and their stores), or :memory:.")
    var db: String?

    @Option(help: "sqlite (files in --db), or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE to share state between nodes.")
    var store: String?

    @Option(help: "HOST:PORT to listen on (port 0: any free port).")
    var listen: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Flag(help: "Validate the configuration, print it (the admin key only as set or not) and exit.")
    var checkConfig = false

    func run() async throws {
        var overrides: [(key: String, value: String, flag: String)] = []
        if let db { overrides.append(("db", db, "--db")) }
        if let store { overrides.append(("store", store, "--store")) }
        if let listen { overrides.append(("listen", listen, "--listen")) }
        if let logLevel { overrides.append(("log-level", logLevel, "--log-level")) }
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.load(
                file: config, environment: ProcessInfo.processInfo.environment, overrides: overrides, backends: Self.storageBackends)
        } catch let error as ConfigurationError {
            printError("pushbridge serve: \(error)")
            throw ExitCode(2)
        }
        if checkConfig {
            print(configuration.summary)
            if let delivery = configuration.delivery {
                // Reads every credential file, as the service would at start; prints labels only.
                do {
                    for credential in try delivery.loadCredentials() {
                        print("credential: \(credential.label) for \(credential.topics.joined(separator: ", "))")
                    }
                } catch let error as ConfigurationError {
                    printError("pushbridge serve: \(error)")
                    throw ExitCode(2)
                }
            }
            print("configuration OK")
            return
        }
        let service: PushBridgeService
        do {
            service = try PushBridgeService(configuration: configuration, storage: configuration.storage(from: Self.storageBackends), vendors: Self.vendors)
        } catch let error as ConfigurationError {
            // A setting the service can only judge when it starts (a credential file's key): a bad setting.
            printError("pushbridge serve: \(error)")
            throw ExitCode(2)
        } catch let error as StoreError {
            printError("pushbridge serve: \(error)")
            throw ExitCode(4)
        } catch let error as StorageURLError {
            printError("pushbridge serve: store: \(error.expected)")
            throw ExitCode(2)
        } catch {
            printError("pushbridge serve: cannot open \(configuration.database): \(error)")
            throw ExitCode(4)
        }
        let app = service.application { channel in
            let port = channel.localAddress?.port ?? configuration.port
            FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(port)\n".utf8))
        }
        try await app.runService()
    }
}
