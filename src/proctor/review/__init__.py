"""Human in the loop: reports that let a person check the rubric (003 §6.7) and refine the bank."""
