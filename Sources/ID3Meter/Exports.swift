// What reads bytes (ID3MeterCore) comes with what fetches them: one import for a backend.
@_exported import ID3MeterCore
