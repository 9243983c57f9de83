# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/20261201T034152Z.csv'
run_id = '20261201T034152Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = 16384 / S, heads = 2048 / D, bf16'
grid_note = 'batch = 16384 / S, heads = 2048 / D, bf16, cold mode'
npanels = 4
array panel_file[4] = ['plots/h200/data/panel_D64_full.dat', 'plots/h200/data/panel_D64_causal.dat', 'plots/h200/data/panel_D128_full.dat', 'plots/h200/data/panel_D128_causal.dat']
array panel_title[4] = ['D = 64, non-causal', 'D = 64, causal', 'D = 128, non-causal', 'D = 128, causal']
nvariants = 12
array variant_name[12] = ['cudnn_sdpa', 'flash_mma', 'flash_hopper', 'naive', 'inplace', 'torch_sdpa_math', 'torch_sdpa_efficient', 'torch_sdpa_flash', 'torch_sdpa_cudnn', 'torch_naive', 'torch_inplace', 'torch_flex']
npeers = 7
array variant_peer[12] = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
array variant_colour[12] = [1, 2, 3, 4, 5, 6, 7, 2, 1, 4, 5, 8]
have_cudnn = 1
have_naive = 1
seq_min = 512
seq_max = 16384
array panel_n_ms[4] = [72, 72, 72, 72]
array panel_n_tflops[4] = [72, 72, 72, 72]
array panel_n_mem[4] = [72, 72, 72, 72]
array panel_n_naive[4] = [72, 72, 72, 72]
array panel_n_energy[4] = [72, 72, 72, 72]
have_energy = 1
headline_n = 5
array headline_show[12] = [0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1]
array panel_n_headline[4] = [30, 30, 30, 30]
headline_ymin = 0.401394
headline_ymax = 1.24761
headline_note = 'not shown: naive, inplace and 4 PyTorch peers, 2.3–85× slower than cudnn_sdpa'
peak_tflops = 810.5
tflops_max = 726.12
mem_unit = 'GiB'
mem_per_unit = 1024
mem_max = 75778
mem_note = 'on the zero line: cudnn_sdpa, flash_mma, flash_hopper and 3 PyTorch peers (at most 128 MiB at any S)'
have_torch = 1
array panel_n_torch[4] = [30, 30, 30, 30]
torch_ymax = 1.27575
torch_note = 'fastest PyTorch peer: torch_sdpa_cudnn at all 24 points'
have_ratio = 1
baseline = 'results/h200/baselines/baseline-20261130T045924Z.csv'
baseline_run_id = '20261130T042431Z'
ratio_rows = 250
ratio_throttled = 0
ratio_slower = 0
ratio_ymin = 0.81132
ratio_ymax = 1.08443
ratio_seq_min = 512
ratio_seq_max = 16384
ratio_modes = 'cold graph'
nratio_panels = 4
array ratio_panel_file[4] = ['plots/h200/data/ratio_D64_full.dat', 'plots/h200/data/ratio_D64_causal.dat', 'plots/h200/data/ratio_D128_full.dat', 'plots/h200/data/ratio_D128_causal.dat']
array ratio_panel_title[4] = ['D = 64, non-causal', 'D = 64, causal', 'D = 128, non-causal', 'D = 128, causal']
