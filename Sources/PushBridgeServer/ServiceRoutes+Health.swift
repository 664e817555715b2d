import Hummingbird
import PushBridgeJSON

extension ServiceRoutes {
    /// `GET /healthz` (the process answers), `GET /readyz` (it takes requests), `GET /metrics`.
    func registerHealth(on router: RecordingRouter<Context>) {
        router.get("/healthz") { _, _ in json(Array(#"{"status":"ok"}"#.utf8)) }
        router.get("/readyz") { _, _ in
            guard apps.isOpen else { throw ServiceError.stopping }
            // Not ready while the database cannot be reached (PostgreSQL); /healthz stays the liveness check.
            guard await apps.storeIsReachable() else { throw ServiceError.storeUnavailable }
            return json(Array(#"{"status":"ready"}"#.utf8))
        }
        router.get("/metrics") { _, _ in
            if let connections = apps.storageConnections() { metrics.storage(connections) }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }
}
