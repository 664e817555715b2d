@testable import PushBridgeServer
import Testing

/// How many receivers a push task's page holds: `push-task-page-size`, and for a paced task
/// (`push-task-rate`) at most a fiftieth of its rate, so its writes are short and even.
@Suite("Push task pages")
struct TaskRunnerPagesTests {
    @Test("a paced task's pages hold at most its rate over 50 receivers (at least one); an unpaced one's the page size", arguments: [
        (750, nil, 750), (750, 5_000, 100), (750, 2_500, 50), (750, 1_000_000, 750), (750, 37_500, 750), (2, 4, 1), (1, 6, 1), (100, 10_000, 100), (100, 4_999, 99),
    ] as [(Int, Int?, Int)])
    func receiversAPage(pageSize: Int, rate: Int?, expected: Int) {
        let settings = TaskRunner.Settings(pageSize: pageSize, receiversPerSecond: rate)
        #expect(settings.receiversAPage == expected, "page size \(pageSize), rate \(rate.map(String.init) ?? "none")")
    }
}
