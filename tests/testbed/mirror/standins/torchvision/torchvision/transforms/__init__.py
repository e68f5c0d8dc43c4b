"""TEST STAND-IN for torchvision.transforms (sglang-stack test bed): the module SGLang 0.5.9 imports at
start-up (srt/multimodal/internvl_utils.py). Names only; nothing here transforms anything."""

STANDIN = True
