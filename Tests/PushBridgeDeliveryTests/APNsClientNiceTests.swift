#if canImport(Glibc)
import Glibc
#endif
@testable import PushBridgeDelivery
import Testing

/// The APNs client's event loop threads at the nice value its endpoint asks for (Linux, where a
/// thread's nice value is its own), so a service's requests get the CPU before its deliveries.
@Suite("APNs client thread priority")
struct APNsClientNiceTests {
    @Test("each event loop thread runs at the endpoint's nice value; 0 leaves the process's own")
    func eventLoopNice() async throws {
        #if os(Linux)
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        // Asked for 0: the process's own; else the value asked (at most 19), or the process's own when
        // that is higher and the process may not lower it.
        for (asked, set) in [(Int32(0), own), (10, 10), (25, 19)] {
            let client = try APNsClient(
                endpoint: .init(baseURL: "https://127.0.0.1:9", trustedCAFile: nil, eventLoopNice: asked), credentials: [])
            let values = try await client.eventLoopNiceValues()
            await client.shutdown()
            #expect(!values.isEmpty && values.allSatisfy { $0 == set || ($0 == own && own > set) }, "asked \(asked): \(values) (the process's own \(own))")
        }
        #endif
    }
}
