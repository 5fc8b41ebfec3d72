package javademo.expr;

/** Thrown when an expression cannot be tokenized, parsed or evaluated. */
public class ParseException extends RuntimeException {
    private final int position;

    /**
     * @param message what went wrong
     * @param position the offset in the input, or -1 when unknown
     */
    public ParseException(String message, int position) {
        super(position >= 0 ? message + " at position " + position : message);
        this.position = position;
    }

    /** @return the offset in the input, or -1 when unknown */
    public int getPosition() {
        return position;
    }
}
