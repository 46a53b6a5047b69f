/// Which programs of a transport stream are read. A broadcast contribution feed (an MPTS) carries
/// several channels, each a program with its own timed-ID3 PID: metered as one, two channels
/// would be credited as one.
public enum ProgramSelection: Sendable, Equatable {
    /// Every program, each a tag stream of its own (what a scan reports).
    case all
    /// One program, by its program_number (`--program`).
    case only(Int)
    /// The one program that carries timed ID3; when several do, none is read and the stream
    /// says which (a meter must be told which channel it meters). Tags are taken once every
    /// program the PAT lists has shown its PMT, so that none is delivered before that is known.
    case single
}
