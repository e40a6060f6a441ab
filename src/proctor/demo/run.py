def run_demo(out):
    raise NotImplementedError
