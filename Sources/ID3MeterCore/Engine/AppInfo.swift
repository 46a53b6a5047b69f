extension ReferenceEngine {
    /// `initWithAppInfo`'s arguments. All values are strings, as in the SDK.
    public struct AppInfo: Sendable, Equatable {
        public var appID: String
        public var appName: String
        public var appVersion: String
        public var sfcode: String
        public var devDebug: Bool

        /// The SDK's app info; an empty value disables the engine (errors 1004-1007), as in the SDK.
        public init(appID: String, appName: String, appVersion: String, sfcode: String = "dcr", devDebug: Bool = false) {
            self.appID = appID
            self.appName = appName
            self.appVersion = appVersion
            self.sfcode = sfcode
            self.devDebug = devDebug
        }

        /// Each empty field's error, as the SDK reports them (1004-1007); empty when the info is usable.
        package var errors: [EngineEvent] {
            var errors: [EngineEvent] = []
            if appID.isEmpty { errors.append(.error(.emptyAppID, "appid is empty")) }
            if appName.isEmpty { errors.append(.error(.emptyAppName, "appname is empty")) }
            if appVersion.isEmpty { errors.append(.error(.emptyAppVersion, "appversion is empty")) }
            if sfcode.isEmpty { errors.append(.error(.emptyValue, "sfcode is empty")) }
            return errors
        }
    }
}
