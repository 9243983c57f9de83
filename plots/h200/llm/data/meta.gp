# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/20261201T055313Z.csv'
run_id = '20261201T055313Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = tokens / S (per panel), heads per panel, bf16'
grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode'
npanels = 6
array panel_file[6] = ['plots/h200/llm/data/panel_H16_KV1_D128_causal.dat', 'plots/h200/llm/data/panel_H32_KV8_D128_causal.dat', 'plots/h200/llm/data/panel_H32_KV8_D128_causal_varlen-uniform-0.dat', 'plots/h200/llm/data/panel_H64_KV8_D128_causal.dat', 'plots/h200/llm/data/panel_H16_KV16_D192_causal.dat', 'plots/h200/llm/data/panel_H16_KV8_D256_causal.dat']
array panel_title[6] = ['H=16 KV=1 (MQA), D=128, causal', 'H=32 KV=8, D=128, causal', 'H=32 KV=8, D=128, causal, varlen uniform:0', 'H=64 KV=8, D=128, causal', 'H=16, D=192, causal', 'H=16 KV=8, D=256, causal']
nvariants = 12
array variant_name[12] = ['naive', 'inplace', 'cudnn_sdpa', 'flash_mma', 'flash_hopper', 'torch_naive', 'torch_inplace', 'torch_sdpa_math', 'torch_sdpa_efficient', 'torch_sdpa_flash', 'torch_sdpa_cudnn', 'torch_flex']
npeers = 7
array variant_peer[12] = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
array variant_colour[12] = [1, 2, 3, 4, 5, 1, 2, 6, 7, 4, 3, 8]
have_cudnn = 1
have_naive = 1
seq_min = 2048
seq_max = 16384
array panel_n_ms[6] = [36, 36, 6, 35, 40, 36]
array panel_n_tflops[6] = [36, 36, 6, 35, 40, 36]
array panel_n_mem[6] = [36, 36, 6, 35, 40, 36]
array panel_n_naive[6] = [36, 36, 6, 35, 40, 36]
array panel_n_energy[6] = [36, 36, 6, 35, 40, 36]
have_energy = 1
headline_n = 3
array headline_show[12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
array panel_n_headline[6] = [12, 12, 1, 12, 12, 12]
headline_ymin = 0.346379
headline_ymax = 1.19901
headline_note = 'not shown: naive, inplace and 4 PyTorch peers, 4.6–66× slower than cudnn_sdpa'
peak_tflops = 802.7
tflops_max = 697.44
mem_unit = 'GiB'
mem_per_unit = 1024
mem_max = 76802
mem_note = 'on the zero line: cudnn_sdpa and 3 PyTorch peers (at most 288 MiB at any S)'
have_torch = 1
array panel_n_torch[6] = [12, 12, 3, 12, 12, 12]
torch_ymax = 2.17441
torch_note = 'fastest PyTorch peer: torch_sdpa_cudnn at 20 points, torch_flex at 1'
have_ratio = 0
baseline = ''
