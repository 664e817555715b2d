/// PushBridge's version: the one place it is written (`pushbridge --version`, CHANGELOG.md; `make bench-compare REF=` finds a version by it).
public enum PushBridgeVersion {
    /// The current release, semantic versioning.
    public static let current = "0.69.4"
}
