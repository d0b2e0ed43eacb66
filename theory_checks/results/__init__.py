"""What a result is and how it is judged.

The check protocol, roles, verdicts, power, the evidence ladder and the one JSON codec.
"""
