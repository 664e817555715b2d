import ArgumentParser
import Foundation
import PushBridgeVendorREST

/// `pushbridge usersig`: a Tencent UserSig v2, made exactly as Tencent's `TLSSigAPIv2.gen_sig`
/// does, for calling the Tencent REST of a service (or Tencent's own).
struct UserSigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usersig",
        abstract: "Print a Tencent UserSig v2 for an SDKAppID and identifier (as Tencent's TLSSigAPIv2 makes it).",
        discussion: "The secret key is read from a file (or PUSHBRIDGE_TENCENT_SECRET_KEY), never from the command line, so it stays out of process lists.")

    @Option(help: "The SDKAppID.")
    var sdkappid: UInt64

    @Option(help: "The account the signature is for (the administrator, for REST calls).")
    var identifier = "administrator"

    @Option(help: "A file holding the app's secret key.")
    var secretKeyFile: String?

    @Option(help: "Seconds the signature lasts (Tencent's default: 180 days).")
    var expire: Int64 = 180 * 86_400

    func validate() throws {
        if identifier.isEmpty { throw ValidationError("--identifier must not be empty") }
        if expire <= 0 { throw ValidationError("--expire must be a positive number of seconds") }
    }

    func run() throws {
        let key = try readSecret(
            file: secretKeyFile, option: "--secret-key-file", variable: "PUSHBRIDGE_TENCENT_SECRET_KEY", what: "the app's secret key", command: "usersig")
        print(UserSig.generate(sdkAppID: sdkappid, identifier: identifier, secretKey: key, time: Int64(Date().timeIntervalSince1970), expire: expire))
    }
}
